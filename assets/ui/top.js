// The page's top (js_on_load): the level picker, the language switch and projector mode.
// 'choose' and 'lang' are Gradio events; the link (?level=…&lang=…) always names the level on screen, so a reload
// or a language switch stays on it.
// what the server's `link` decides: the parameters ui/session.py's LINK_PARAMS marks kept
const LINK = Object.keys(window.__dragonLink || {}).filter((k) => window.__dragonLink[k].kept);
function syncLink() {
  const url = new URL(location.href);
  if (props.level) {
    LINK.forEach((k) => url.searchParams.delete(k));
    const link = props.link || {};
    for (const k of LINK) if (link[k]) url.searchParams.set(k, link[k]);
  }
  if (props.lang) url.searchParams.set("lang", props.lang);
  history.replaceState(null, "", url.toString());
  const pick = element.querySelector(".level-pick");
  if (pick && props.level) pick.value = props.level;
  const box = element.querySelector(".projector-toggle");
  if (box) box.checked = document.body.classList.contains("projector");
}

element.addEventListener("change", (event) => {
  const el = event.target;
  if (el.classList.contains("level-pick")) {
    trigger("choose", { level: el.value });
  } else if (el.classList.contains("projector-toggle")) {
    window.__dragon.setProjector(el.checked);
  }
});

// The sandbox's text box sits in the top: its button sends the text to be read ('read', with the sliders on screen).
let reading = false;
function readText() {
  const box = element.querySelector("#mhd-sb-text");
  const lang = element.querySelector('[data-field="tlang"]');
  document.dispatchEvent(new Event("mhd-sync"));
  reading = true;
  trigger("read", { text: box ? box.value : "", tlang: lang ? lang.value : "auto" });
}
// ... and once read, the box holds what the dragon read (cut at 800 characters, as the note under the button says):
// the answer patches the box's markup, and a box typed in would keep its own longer value over it.
watch("story", () => {
  const box = element.querySelector("#mhd-sb-text");
  if (reading && box && box.value !== box.defaultValue) box.value = box.defaultValue;
  reading = false;
});
element.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && event.target.id === "mhd-sb-text") {
    event.preventDefault();
    readText();
  }
});

element.addEventListener("click", (event) => {
  if (event.target.closest("#mhd-sb-read")) {
    readText();
    return;
  }
  const button = event.target.closest("button[data-lang]");
  if (!button || button.dataset.lang === props.lang) return;
  window.__dragon.setLang(button.dataset.lang);
  document.dispatchEvent(new Event("mhd-sync")); // the panel hands Gradio the sliders on screen first
  trigger("lang", { lang: button.dataset.lang });
});

watch(["level", "lang", "options", "notice", "link"], syncLink);
// A new level (chosen, or the next one) opens at its top: the level list and the title, where the player reads
// what to do.
watch("level", () => {
  window.__dragon.whenFree("title", () => {
    if (element.getBoundingClientRect().top < 0) element.scrollIntoView({ block: "start" });
  });
});
syncLink();
