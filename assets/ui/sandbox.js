// The sandbox (js_on_load): a button sends its data-act as the event with every [data-field] of the box as data.
// 'make' takes the sliders as the target, so the panel first hands Gradio the sliders on screen (mhd-sync).
// EVENTS (put before this script by ui/components.py) names the events a button may send.
element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (!button || !EVENTS.includes(button.dataset.act)) return;
  const data = {};
  element.querySelectorAll("[data-field]").forEach((el) => { data[el.dataset.field] = el.value; });
  if (button.dataset.act === "make") document.dispatchEvent(new Event("mhd-sync"));
  button.classList.add("running");
  trigger(button.dataset.act, data);
});
watch(["body", "ack"], () => {
  element.querySelectorAll("button.running").forEach((b) => b.classList.remove("running"));
  const msg = element.querySelector(".sb-msg .refusal, .sb-model .cb-grid, .sb-model .result");
  if (msg) msg.scrollIntoView({ block: "nearest" });
});
