// The teachers' box (js_on_load): the links of what is on screen (built here from the page's own address, the
// server's `params` and the language), copy buttons, the print / export buttons ('file' event: the server answers
// with `file`, done here — printed, drawn as PNG or downloaded), and a level file read in the browser ('open').
// EVENTS (put before this script by ui/components.py) names the events a button may send.
const done = new Set();

function linkFor(kind) {
  const url = new URL(location.origin + location.pathname);
  const params = props.params || {};
  for (const k of Object.keys(params)) url.searchParams.set(k, params[k]);
  url.searchParams.set("lang", (window.__dragon && window.__dragon.lang) || "zh");
  if (kind === "exam") url.searchParams.set("exam", "1");
  return url.toString();
}

function fillLinks() {
  element.querySelectorAll("input[data-link]").forEach((el) => { el.value = linkFor(el.dataset.link); });
}

element.addEventListener("click", (event) => {
  const copy = event.target.closest("button[data-copy]");
  if (copy) {
    const box = element.querySelector(`input[data-link="${copy.dataset.copy}"]`);
    if (!box) return;
    box.select();
    const said = () => { copy.dataset.done = "1"; setTimeout(() => delete copy.dataset.done, 1500); };
    if (navigator.clipboard) navigator.clipboard.writeText(box.value).then(said, () => document.execCommand("copy"));
    else document.execCommand("copy");
    return;
  }
  const file = event.target.closest("button[data-file]");
  if (file) {
    document.dispatchEvent(new Event("mhd-sync")); // a report reads the sliders on screen
    file.classList.add("running");
    trigger("file", { what: file.dataset.file });
    return;
  }
  const button = event.target.closest("button[data-act]");
  if (button && EVENTS.includes(button.dataset.act)) {
    const data = {};
    element.querySelectorAll("[data-field]").forEach((el) => { data[el.dataset.field] = el.value; });
    button.classList.add("running");
    trigger(button.dataset.act, data);
  }
});

// Open or shut as the teacher left it: a redraw (a new level, the other language) draws the box from `open`.
element.addEventListener("toggle", (event) => {
  if (event.target.matches("details")) props.open = event.target.open;
}, true);

// An uploaded file is read here and put in the text box, where the teacher sees it before opening it.
element.addEventListener("change", (event) => {
  const input = event.target;
  if (!input.classList || !input.classList.contains("tb-upload") || !input.files || !input.files[0]) return;
  const reader = new FileReader();
  reader.onload = () => {
    const box = element.querySelector('[data-field="source"]');
    if (box) box.value = String(reader.result || "");
  };
  reader.readAsText(input.files[0].slice(0, 40000));
});

function deliver() {
  element.querySelectorAll("button.running").forEach((b) => b.classList.remove("running"));
  const f = props.file || {};
  if (!f.nonce || done.has(f.nonce)) return;
  done.add(f.nonce);
  const ex = window.__dragonExport;
  if (!ex) return;
  if (f.kind === "png") ex.downloadPng(f.name, f.content, 2);
  else if (f.kind === "print") ex.printHtml(f.content, f.name);
  else ex.download(f.name, f.content, f.mime);
}

watch(["params", "body"], fillLinks);
watch(["file", "message"], deliver);
fillLinks();
