// The progress code (js_on_load): 'export_code' fills the box; 'import_code' sends what was pasted as event data.
element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (!button) return;
  const box = element.querySelector("textarea");
  if (button.dataset.act === "export") trigger("export_code");
  if (button.dataset.act === "import") trigger("import_code", { code: box ? box.value : "" });
});

element.addEventListener("toggle", (event) => {
  if (event.target.matches("details")) props.open = event.target.open;
}, true);

watch("code", () => {
  const box = element.querySelector("textarea");
  if (box && props.code) {
    box.value = props.code;
    box.select();
  }
});

watch("message", () => {
  const msg = element.querySelector(".code-msg");
  if (msg && msg.textContent.trim() && window.__dragon) window.__dragon.reveal(msg);
});
