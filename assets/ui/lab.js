// The lab levels' panel, chapters 3–5 (js_on_load). A formula symbol opens its real tensor and 3-3's switches show
// the measured setting, both without a server call (the server sent every view it allows). A button sends its
// data-act as the event, with every [data-answer] field on the panel as event data; the events are the rooms'
// actions (ui/rooms/registry.py), and 'warm' is asked by the panel itself the first time a level needs the real model.
// The answer appears right under the button that asked for it, and is brought into view. EVENTS (put before this
// script by ui/components.py) names every event a button may send; any other data-act is not sent.
let opened = null; // the symbol the player last opened, kept across re-renders of the same round

function openSymbol(sym) {
  const views = element.querySelectorAll(".tensor[data-for]");
  if (!views.length) return;
  if (!element.querySelector(`.tensor[data-for="${sym}"]`)) sym = views[0].dataset.for;
  element.querySelectorAll("button[data-sym]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.sym === sym)));
  views.forEach((v) => { v.hidden = v.dataset.for !== sym; });
}

function showSetting() {
  const wo = element.querySelector('[data-switch="wo"]');
  const res = element.querySelector('[data-switch="res"]');
  if (!wo || !res) return;
  const key = `${wo.checked ? 1 : 0}${res.checked ? 1 : 0}`;
  element.querySelectorAll("[data-setting]").forEach((s) => { s.hidden = s.dataset.setting !== key; });
}

function answersOnPanel() {
  const answers = {};
  element.querySelectorAll("[data-answer]").forEach((el) => {
    // a number box holding what is no number ("abc") reads as empty: it goes as "NaN", which the server refuses
    const bad = el.type === "number" && el.validity && el.validity.badInput;
    answers[el.dataset.answer] = el.type === "checkbox" ? (el.checked ? "1" : "0") : bad ? "NaN" : el.value;
  });
  return answers;
}

// A run on its way in the server's lane (ui/rooms/waits.py): ask the server function `wait` about it every data-poll ms and
// draw what it says (what runs, how far, the place in the queue, the live curve); once it is done, send the event
// that asked for it again (data-then), which now finds the result. One poll at a time; a new panel starts afresh.
let polling = null;
function poll() {
  const box = element.querySelector("[data-wait]");
  if (!box || polling === box.dataset.wait) return;
  const id = (polling = box.dataset.wait);
  const tick = async () => {
    let answer = null;
    try {
      answer = await server.wait({ run: id, lang: box.dataset.lang });
    } catch (err) {
      answer = null; // a dropped poll: ask again
    }
    const now = element.querySelector(`[data-wait="${id}"]`);
    if (polling !== id) return;
    if (!now) {
      polling = null; // the panel moved on
      return;
    }
    if (answer && answer.done) {
      polling = null;
      if (!EVENTS.includes(now.dataset.then)) return;
      asked = now.dataset.then; // its answer comes into view, as after a click
      trigger(now.dataset.then, answersOnPanel());
      return;
    }
    if (answer && typeof answer.html === "string") {
      const curve = !now.querySelector("svg") && answer.html.includes("<svg");
      now.innerHTML = answer.html;
      if (curve && window.__dragon) window.__dragon.reveal(now); // the live curve has just begun: bring it into view
    }
    setTimeout(tick, Number(now.dataset.poll) || 500);
  };
  setTimeout(tick, Number(box.dataset.poll) || 500);
}

element.addEventListener("click", (event) => {
  const sym = event.target.closest("button[data-sym]");
  if (sym) {
    opened = sym.dataset.sym;
    openSymbol(opened);
    return;
  }
  const button = event.target.closest("button[data-act]");
  if (!button || !EVENTS.includes(button.dataset.act)) return;
  const answers = answersOnPanel();
  if (button.dataset.pick) answers.pick = button.dataset.pick;
  button.classList.add("running"); // greyed until the answer; after half a second it says "One moment…"
  if (button.dataset.act === "round" || button.dataset.act === "again") opened = null;
  trigger(button.dataset.act, answers);
});

element.addEventListener("change", (event) => {
  if (event.target.matches("[data-switch]")) showSetting();
});

// A new question on screen (3-1's next round: its data-key changed): every choice shows what the server sent (none
// yet), not what the browser kept in the re-used box from the last round, and the question comes into view.
let questionKey = null;
function freshQuestion() {
  const keyed = element.querySelector("[data-key]");
  const key = keyed ? keyed.dataset.key : null;
  if (key === questionKey) return false;
  const changed = questionKey !== null && key !== null;
  questionKey = key;
  if (!changed) return false;
  element.querySelectorAll("select[data-answer]").forEach((el) => {
    const chosen = el.querySelector("option[selected]");
    el.value = chosen ? chosen.value : el.options.length ? el.options[0].value : "";
  });
  return true;
}

function settle() {
  const root = element.querySelector("[data-open]");
  openSymbol(opened && root && root.dataset.open !== "softmax" ? opened : root ? root.dataset.open : "");
  showSetting();
  return freshQuestion();
}

// Every answer re-renders the panel: open the right view, then bring the answer to the button just pressed into
// view — the whole answer when it fits the screen (the measurement and the why together, as the teacher explains
// them), else from its first line — once no finger or button is held down. A button the answer took away hands the
// focus to the answer, so the keyboard goes on from there.
let asked = null;
let askedFrom = null; // the button pressed: the focus stays on it if it is still there
element.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-act]");
  if (button) {
    asked = button.dataset.act;
    askedFrom = button;
  }
}, true);
let warming = 0; // the ack of the panel that last asked for the model: ask once per panel
function autoload() {
  const ask = element.querySelector("[data-autoload]");
  if (ask && warming !== props.ack && EVENTS.includes(ask.dataset.autoload)) {
    warming = props.ack;
    trigger(ask.dataset.autoload, {});
  }
}

// Every server answer carries a new ack, even one that leaves the panel's HTML as it was (the same refusal twice):
// the button that asked is freed here, not by the re-render, or it would stay greyed out for good.
let questionShown = false; // a room's question marked data-reveal (4-1's heads) comes into view once, whole
function showQuestion() {
  const question = element.querySelector("[data-reveal]");
  if (!question) questionShown = false;
  else if (!questionShown && window.__dragon) {
    questionShown = true;
    requestAnimationFrame(() => window.__dragon.reveal(question, question, true)); // once laid out
  }
}
watch("ack", () => {
  element.querySelectorAll("button.running").forEach((b) => b.classList.remove("running"));
  const fresh = settle();
  autoload();
  poll();
  if (fresh && asked === "round") { // the next round: its question, not the last round's answer, comes into view
    const question = element.querySelector("h3.round");
    const asks = element.querySelectorAll("select[data-answer]");
    asked = askedFrom = null;
    if (asks.length) asks[0].focus({ preventScroll: true });
    // the round's title down to its last choice; on a screen too short for both, the title at the top
    if (question && window.__dragon) requestAnimationFrame(() => window.__dragon.reveal(question, asks[asks.length - 1] || question));
    return;
  }
  if (!asked) showQuestion();
  if (!asked) return;
  const target = asked === "quiz"
    ? element.querySelector(".quiz-box")
    : asked === "try"
    ? element.querySelector(".try-box")
    : asked === "rethink" // the second prediction answers in its own section, under the stars
    ? element.querySelector(".rethink")
    : asked === "heal" // 4-4's heal answers in its own section, under the level's answer
    ? element.querySelector(".heal")
    : element.querySelector(".result-box");
  const from = askedFrom;
  const kept = from && from.isConnected && from.dataset.act === asked && document.activeElement === from;
  asked = askedFrom = null;
  if (!target) return;
  const active = document.activeElement;
  if (!kept && (!active || active === document.body || !active.isConnected || active === from)) {
    target.setAttribute("tabindex", "-1"); // the answer takes the focus (not a tab stop of its own)
    target.focus({ preventScroll: true });
  }
  if (window.__dragon) window.__dragon.reveal(target);
});

settle();
autoload();
poll();
showQuestion();
