// The goddess's control panel (runs as the component's js_on_load: element, props, trigger, server, watch).
//
// A slider move never goes through Gradio's event machinery: the script keeps the eight gates, lights the dragon
// (CSS variables) and asks the server function `live` for the new score and comparison, which it draws into the
// [data-live] boxes itself: one small request, never two at a time, the latest gates always last. The template is
// re-rendered only when the server changes the panel (a button's answer, a new level). props.value (the gates
// Gradio sends with an event) is brought up to date just before each event: 'record' (the score beat the
// player's record: save it), and the buttons 'hint', 'demo', 'reset', 'reveal', 'next'.
// The progress each move is scored against is the server's (props.saved), or the better one a live answer brought
// back (what 'record' saves, from the gates it was scored on), so the next move already counts the new best
// without waiting for 'record', and the best shown never goes down within a level.
const ACTIONS = ["hint", "demo", "reset", "reveal", "next"];
const LIVE = ["gauge", "compare", "say"];
let gates = (props.value || []).slice();
const view = { gauge: props.gauge, compare: props.compare, say: props.say || "" };
let busy = false;
let again = false;
let epoch = 0; // bumped whenever the server sets the sliders: answers for older gates are then dropped
let scrollWanted = false;
let hintStale = false;
let lastAck = props.ack;
let saved = props.saved;
let savedAt = 0; // bumped whenever the server sets props.saved: a live answer sent before that keeps out of it
const brought = []; // the progress each record-beating live answer brought, oldest first

const root = () => element.querySelector(".mhd-panel");
const round2 = (v) => Math.round(v * 100) / 100;

function paint() {
  for (const key of LIVE) {
    const box = element.querySelector(`[data-live="${key}"]`);
    if (!box) continue;
    if (box.__shown !== view[key] || (!box.firstChild && view[key])) {
      if (key === "say") box.textContent = view[key] || "";
      else box.innerHTML = view[key] || "";
      box.__shown = view[key];
    }
  }
}

function glow() {
  gates.forEach((g, i) => element.style.setProperty(`--g${i}`, String(g)));
}

function showGates() {
  element.querySelectorAll("input.range, input.num").forEach((el) => {
    const i = Number(el.dataset.i);
    if (el.classList.contains("num") && i in typing) {
      keepTyping(el, i); // a box the player is typing in keeps their text, even in a freshly drawn panel
      return;
    }
    const v = String(gates[i]);
    if (el.value !== v) el.value = v;
    if (el.classList.contains("range")) el.style.setProperty("--v", v);
  });
  glow();
}

// Number boxes being typed in and not yet committed: index -> text. A save (or any server answer) redraws the
// panel; the player's half-typed number and their cursor must survive that.
const typing = {};
let typingAt = null; // the box that had the focus

function keepTyping(el, i) {
  if (el.value !== typing[i]) el.value = typing[i];
  if (typingAt === i && document.activeElement !== el && !element.contains(document.activeElement)) {
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }
}

// Before a Gradio event: the component's value must be the gates it is about, by default those on screen (this
// re-renders the template; the sliders keep showing `gates`).
function sync(to = gates) {
  const current = props.value || [];
  if (to.some((g, i) => g !== current[i])) {
    props.value = to.slice();
    queueMicrotask(() => {
      paint(); // after the re-render
      showGates();
      fadeHint();
    });
  }
}

// 'record' saves the gates a record-beating live answer was scored on, not wherever the sliders are by now: they go
// in props.value, which Gradio reads when the event is sent (Gradio's always_last runs a record asked for while one is
// in flight once that one is back, reading props.value then: the latest record's gates; its event data would be the
// first one's). The next button event syncs props.value to the sliders again.
function record(scored) {
  sync(scored);
  trigger("record");
}

function live() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  const sent = epoch;
  const sentAt = savedAt;
  const level = props.level;
  const scored = gates.slice();
  server
    .live({ level: level, lang: props.lang, gates: scored, saved: saved, code: props.code || "" })
    .then((answer) => {
      if (!answer || !answer.view || sent !== epoch || level !== props.level) return;
      for (const key of LIVE) if (key in answer.view) view[key] = answer.view[key];
      if (answer.saved && sentAt === savedAt) {
        saved = answer.saved;
        brought.push(saved);
        if (brought.length > 64) brought.shift();
      }
      paint();
      if (answer.record) record(scored);
    })
    .catch(() => {})
    .finally(() => {
      busy = false;
      if (again) {
        again = false;
        live();
      }
    });
}

function setGate(i, v) {
  gates[i] = round2(v);
  glow();
  hintStale = true; // the player moved on: Little T's arrow and line were about the sliders as they were
  fadeHint();
}

// Little T's advice fades once the player moves a slider (it stays readable, marked as old), until the next answer.
function fadeHint() {
  if (!hintStale) return;
  element.querySelectorAll(".hint-arrow").forEach((el) => el.remove());
  element.querySelectorAll(".feedback .coach").forEach((el) => el.classList.add("stale"));
}

// Another component's event that carries the sliders (the language switch) asks for them first.
document.addEventListener("mhd-sync", () => sync()); // not sync(event): its argument is the gates

function slid(el) {
  const i = Number(el.dataset.i);
  const msg = el.closest(".srow").querySelector(".smsg");
  if (msg) msg.textContent = "";
  setGate(i, parseFloat(el.value));
  el.style.setProperty("--v", String(gates[i]));
  const box = el.closest(".srow").querySelector("input.num");
  if (box) box.value = String(gates[i]);
  live();
}

guardSliderTouches(element, "input.range"); // assets/ui/touch_guard.js, loaded before this script

element.addEventListener("input", (event) => {
  const el = event.target;
  if (!el.classList || !el.classList.contains("range")) return;
  slid(el);
});

// A number box is read when it is committed (Enter or leaving it). Anything that is not a number from 0 to 1
// changes nothing: the box goes back to the slider's value and a message says why, next to the box.
element.addEventListener("input", (event) => {
  const el = event.target;
  if (!el.classList || !el.classList.contains("num")) return;
  typing[Number(el.dataset.i)] = el.value;
  typingAt = Number(el.dataset.i);
});
element.addEventListener("focusout", (event) => {
  const el = event.target;
  if (el.classList && el.classList.contains("num") && el.isConnected && typingAt === Number(el.dataset.i)) {
    typingAt = null; // a real blur (not the box being redrawn away)
  }
});

// A number box is committed by Enter or by leaving it (change). Committing twice is harmless.
element.addEventListener("change", (event) => {
  const el = event.target;
  if (!el.classList || !el.classList.contains("num")) return;
  const i = Number(el.dataset.i);
  if (!(i in typing) && el.value === String(gates[i])) return; // already committed by Enter
  commitBox(el);
});

function commitBox(el) {
  const i = Number(el.dataset.i);
  delete typing[i];
  const raw = String(el.value).trim();
  const v = Number(raw);
  const msg = el.closest(".srow").querySelector(".smsg");
  if (raw === "" || !Number.isFinite(v) || v < 0 || v > 1) {
    el.value = String(gates[i]);
    if (msg) msg.textContent = root().dataset.bad;
    return;
  }
  if (msg) msg.textContent = "";
  setGate(i, v);
  el.value = String(gates[i]);
  const range = el.closest(".srow").querySelector("input.range");
  if (range) {
    range.value = String(gates[i]);
    range.style.setProperty("--v", String(gates[i]));
  }
  live();
}

element.addEventListener("keydown", (event) => {
  const el = event.target;
  if (event.key === "Enter" && el.classList && el.classList.contains("num")) {
    commitBox(el); // a restored box may not fire change on blur: commit here
    typingAt = null; // the focus stays in the box: the next Tab goes on to the next slider
  }
});

element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (button && ACTIONS.includes(button.dataset.act)) {
    scrollWanted = true;
    sync();
    trigger(button.dataset.act);
    return;
  }
  const link = event.target.closest("[data-goto]");
  if (link) {
    event.preventDefault();
    const target = element.querySelector(link.dataset.goto);
    if (target && window.__dragon) window.__dragon.reveal(target);
  }
});

// The server drew something new: its gauge, comparison and spoken line (the level on screen, in the language on
// screen) replace the live ones.
watch(["gauge", "compare", "say"], () => {
  view.gauge = props.gauge;
  view.compare = props.compare;
  view.say = props.say || "";
});
// The server set the progress (a new level, a button's answer, a new star): moves are scored against it.
// A new star's 'record' answer brings the progress a live answer already brought; when later live answers have
// brought better since (the player kept moving up), it is old news and the best on the gauge never goes back down.
watch("saved", () => {
  const at = brought.indexOf(props.saved);
  if (at >= 0 && at < brought.length - 1) return;
  saved = props.saved;
  savedAt += 1;
});
// The server set the sliders (a new level, the demo, start over): take its gates, drop answers for older ones.
// A level opened (`opened` changes) takes them even when they equal the last ones the server sent (0.5 each):
// the sliders the player moved on the previous level never carry over.
function takeServerGates() {
  epoch += 1;
  gates = (props.value || []).slice();
}
watch("value", takeServerGates);
watch("opened", takeServerGates);
// After any re-render: the live boxes and the sliders show the latest.
watch(Object.keys(props), () => {
  if (props.ack !== lastAck) {
    lastAck = props.ack; // a button's new answer (a hint, a reveal, …) is fresh again
    hintStale = false;
  }
  paint();
  showGates();
  fadeHint();
});
// A star never scrolls the page: the sliders stay where the player's hand is (on a phone the sticky summary would
// otherwise cover them). The won line beside the stars offers the why (its link) and the next level.
const page = window.__dragon || {};

// A button's answer lands in the feedback box right under the buttons: bring it into view.
watch("ack", () => {
  if (!scrollWanted) return;
  scrollWanted = false;
  const box = element.querySelector(".feedback");
  if (box && box.textContent.trim() && page.reveal) page.reveal(box);
});

// The focus stays where the player left it: a redraw that replaced the focused control (a button's new answer, a
// star) gives the focus to the control in its place, so the next Tab goes on from there, never off the panel.
let focusKey = null;
function keyOf(el) {
  if (el.id) return `#${el.id}`;
  if (el.dataset && el.dataset.act) return `[data-act="${el.dataset.act}"]`;
  if (el.classList.contains("num")) return `input.num[data-i="${el.dataset.i}"]`;
  return null;
}
let focused = null;
element.addEventListener("focusin", (event) => {
  focused = event.target;
  focusKey = keyOf(event.target);
});
function keepFocus() {
  if (!focused || focused.isConnected || !focusKey) return;
  const active = document.activeElement;
  if (active && active !== document.body && element.contains(active) === false && active.isConnected) return;
  const again = element.querySelector(focusKey);
  if (again) again.focus({ preventScroll: true });
  focused = again;
}
watch(Object.keys(props), () => queueMicrotask(keepFocus));

paint();
showGates();