// The progress code (js_on_load): 'export_code' fills the box; 'import_code' sends what was pasted as event data
// (no more than one character over the longest code the server reads, so a huge paste is refused as too long, never
// sent whole). Over other progress the server asks first: 'replace' imports the code it asked about, 'keep' nothing.
element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (!button) return;
  const box = element.querySelector("textarea");
  const act = button.dataset.act;
  if (act === "export") trigger("export_code");
  if (act === "import") trigger("import_code", { code: box ? box.value.slice(0, (props.max_code || 20000) + 1) : "" });
  if (act === "replace") trigger("import_code", { code: props.pending, answer: "replace" });
  if (act === "keep") trigger("import_code", { code: "", answer: "keep" });
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

// The message, and under it the question with its two answers when there is one, brought into view; a question
// takes the keyboard's focus to 'keep mine' (the answer that changes nothing), and its answer gives it back to Import.
function shown() {
  const msg = element.querySelector(".code-msg");
  if (!msg || !msg.textContent.trim() || !window.__dragon) return;
  const ask = element.querySelector(".code-ask:not([hidden])");
  requestAnimationFrame(() => window.__dragon.reveal(msg, ask || msg));
}
watch("message", shown);
watch("ask", () => {
  const target = element.querySelector(props.ask ? ".code-ask [data-act=keep]" : "[data-act=import]");
  const focused = document.activeElement;
  const inside = focused && (focused === document.body || element.contains(focused));
  if (target && inside) requestAnimationFrame(() => target.focus({ preventScroll: true }));
  shown();
});
