// Runs as the page starts: language and projector mode from the link or the browser's memory, Gradio's own
// translations (gr.I18n) switched to match, and the value of any attention cell on hover or keyboard focus.
(function () {
  const params = new URLSearchParams(location.search);
  const LINK = window.__dragonLink || {}; // the link's parameters, declared once (ui/session.py LINK_PARAMS)
  const cut = (s, n) => Array.from(s || "").slice(0, n).join(""); // n characters, never half an emoji
  const param = (k) => (LINK[k] && LINK[k].flag ? params.get(k) === "1" : cut(params.get(k), LINK[k] ? LINK[k].chars : 0));
  let lang = params.get("lang") || localStorage.getItem("dragon-lang") || "zh";
  if (lang !== "zh" && lang !== "en") lang = "zh";
  const p = params.get("projector");
  const projector = p === null ? localStorage.getItem("dragon-projector") === "1" : p === "1";
  const localeOf = (l) => (l === "en" ? "en" : "zh-CN");

  // The saved progress (gr.BrowserState, encrypted): the largest real one stored is about 13,400 characters (every
  // level and 100 teachers' levels in each table). A far longer value there (edited, or another app's) is removed
  // before Gradio reads it: Gradio would send it with the page's start, and over the server's 1 MiB body limit the
  // page would never open. The server then finds something was stored but nothing came: it says the saved progress
  // was damaged, in the page's language, and starts afresh.
  const SAVED_KEY = "multi-head-dragon-progress";
  const MAX_SAVED = 100000; // characters
  const saved = localStorage.getItem(SAVED_KEY);
  if (saved !== null && saved.length > MAX_SAVED) localStorage.removeItem(SAVED_KEY);

  try {
    const get = () => localeOf(window.__dragon ? window.__dragon.lang : lang);
    Object.defineProperty(navigator, "language", { get: get, configurable: true });
    Object.defineProperty(navigator, "languages", { get: () => [get()], configurable: true });
  } catch (e) { /* older browsers: Gradio falls back to the browser's own language */ }

  // Gradio injects this script after its translations started, so switch its locale the way its own Settings
  // panel does: changeLocale() from the already-loaded core module.
  function gradioLocale(locale, tries) {
    const core = performance.getEntriesByType("resource").map((e) => e.name)
      .find((n) => /\/assets\/core-[^/]+\.js$/.test(n));
    if (core) {
      import(core).then((m) => m.changeLocale && m.changeLocale(locale)).catch(() => {});
    } else if (tries < 20) {
      setTimeout(() => gradioLocale(locale, tries + 1), 150);
    }
  }

  function setLang(l) {
    if (l !== "zh" && l !== "en") return;
    window.__dragon.lang = l;
    localStorage.setItem("dragon-lang", l);
    document.documentElement.lang = localeOf(l);
    const url = new URL(location.href);
    url.searchParams.set("lang", l);
    history.replaceState(null, "", url.toString());
    gradioLocale(localeOf(l), 0);
  }

  function setProjector(on) {
    window.__dragon.projector = on;
    localStorage.setItem("dragon-projector", on ? "1" : "0");
    document.body.classList.toggle("projector", on);
    const url = new URL(location.href);
    url.searchParams.set("projector", on ? "1" : "0");
    history.replaceState(null, "", url.toString());
  }

  // --- a finger or a button held down: nothing scrolls the page by itself meanwhile ----------------------------
  // Touches are counted by the touch events (a touch pointer is cancelled once the browser pans, while the finger
  // stays down); mouse and pen by their pointers. A scroll asked for meanwhile waits for the last one to lift.
  const pointers = new Set();
  let touches = 0;
  const waiting = new Map(); // key -> what to do once nothing is held down (a later ask replaces an earlier one)
  const held = () => pointers.size > 0 || touches > 0;
  function released() {
    if (held()) return;
    const todo = [...waiting.values()];
    waiting.clear();
    todo.forEach((fn) => fn());
  }
  const opts = { capture: true, passive: true };
  window.addEventListener("pointerdown", (e) => { if (e.pointerType !== "touch") pointers.add(e.pointerId); }, opts);
  for (const type of ["pointerup", "pointercancel"]) {
    window.addEventListener(type, (e) => { pointers.delete(e.pointerId); released(); }, opts);
  }
  window.addEventListener("touchstart", (e) => { touches = e.touches.length; }, opts);
  for (const type of ["touchend", "touchcancel"]) {
    window.addEventListener(type, (e) => { touches = e.touches.length; released(); }, opts);
  }
  window.addEventListener("blur", () => { pointers.clear(); touches = 0; released(); });
  function whenFree(key, fn) {
    if (held()) waiting.set(key, fn);
    else fn();
  }

  // The part of the viewport's top that the panel's sticky summary covers (a phone, where it rides on top).
  function covered() {
    const summary = document.querySelector("#panel .mhd-panel:not([hidden]) .summary");
    const controls = summary && summary.parentElement.querySelector(".controls");
    if (!summary || !controls || getComputedStyle(summary).position !== "sticky") return 0;
    const s = summary.getBoundingClientRect(), c = controls.getBoundingClientRect();
    return Math.abs(s.left - c.left) < 4 && s.width > 0.9 * c.width ? s.height : 0; // stacked, not side by side
  }

  // Bring the span from `first`'s top to `last`'s bottom into view: as little scrolling as needed when it fits
  // under the sticky summary, else its top at the top (`onlyWhole`: else not at all). Nothing moves while a finger
  // or a button is held down.
  function reveal(first, last, onlyWhole) {
    whenFree("reveal", () => {
      last = last || first;
      if (!first || !first.isConnected || !last.isConnected) return;
      const a = first.getBoundingClientRect(), b = last.getBoundingClientRect();
      if (!a.height && !b.height) return;
      const top = covered(), bottom = window.innerHeight;
      if (a.top >= top - 1 && b.bottom <= bottom + 1) return;
      if (onlyWhole && b.bottom - a.top > bottom - top) return;
      const dy = b.bottom - a.top <= bottom - top && a.top >= top ? b.bottom - bottom : a.top - top;
      window.scrollBy({ top: dy, left: 0, behavior: "instant" });
    });
  }

  window.__dragon = {
    lang: lang, level: param("level"), projector: projector,
    // a teacher's link: the level itself (custom), the exam switch, the sandbox and its text
    custom: param("custom"), exam: param("exam"), sandbox: param("sandbox"), text: param("text"), tlang: param("tlang"),
    // a live class's everyone round (the class page frames the game): the student's token, so that the results the
    // server scores here count for the class (ui/live_class/routes.py)
    classplay: param("classplay") ? cut(localStorage.getItem("dragon.class.current"), 100) : "",
    // something is saved: if the server then receives no progress, the saved value was unreadable or edited
    stored: saved !== null,
    setLang: setLang, setProjector: setProjector, held: held, whenFree: whenFree, reveal: reveal,
  };
  localStorage.setItem("dragon-lang", lang);
  localStorage.setItem("dragon-projector", projector ? "1" : "0");
  document.documentElement.lang = localeOf(lang);
  const mark = () => document.body && document.body.classList.toggle("projector", projector);
  if (document.body) mark(); else document.addEventListener("DOMContentLoaded", mark);
  gradioLocale(localeOf(lang), 0);

  // --- the value of an attention cell: "情感头: 思 ← 故乡 0.62" -------------------------------------------
  // A map (svg.attn-map) carries its labels and values as data attributes; a shaded text (.hl-words) carries
  // each word's text in data-tip. Pointing shows a tooltip; keyboard focus and the arrow keys move a cursor and
  // the same text is read out (the tooltip is a live region).
  let tip = null;
  function tooltip() {
    if (!tip) {
      tip = document.createElement("div");
      tip.className = "cell-tip";
      tip.setAttribute("role", "status");
      tip.setAttribute("aria-live", "polite");
      document.body.appendChild(tip);
    }
    return tip;
  }
  function show(text, rect) {
    const t = tooltip();
    t.textContent = text;
    t.style.display = "block";
    const x = Math.min(rect.right + 8, window.innerWidth - t.offsetWidth - 4);
    const y = rect.top - t.offsetHeight - 6 < 0 ? rect.bottom + 6 : rect.top - t.offsetHeight - 6;
    t.style.left = Math.max(4, x) + "px";
    t.style.top = y + "px";
  }
  function hide() {
    if (tip) tip.style.display = "none";
  }

  const grid = (svg) => {
    const d = svg.dataset;
    const source = d.rows + "|" + d.cols + "|" + d.v; // a redrawn map may reuse the element: read it again
    if (svg.__source !== source) {
      svg.__source = source;
      svg.__grid = {
        rows: JSON.parse(d.rows), cols: JSON.parse(d.cols), v: d.v.split(","),
        x0: parseFloat(d.x0), y0: parseFloat(d.y0), cell: parseFloat(d.cell),
      };
    }
    return svg.__grid;
  };
  function cellText(svg, i, j) {
    const g = grid(svg);
    const fill = { name: svg.dataset.name, row: g.rows[i], col: g.cols[j], query: svg.dataset.query,
                   v: g.v[i * g.cols.length + j] };
    return svg.dataset.tip.replace(/\{(\w+)\}/g, (m, k) => (k in fill ? fill[k] : m));
  }
  function showCell(svg, i, j, keyboard) {
    const g = grid(svg);
    const cursor = svg.querySelector("rect.cursor");
    if (cursor) {
      cursor.setAttribute("x", g.x0 + j * g.cell);
      cursor.setAttribute("y", g.y0 + i * g.cell);
      cursor.setAttribute("visibility", "visible");
    }
    if (keyboard) svg.__at = [i, j]; // the keyboard's cursor stays where the keys left it
    show(cellText(svg, i, j), (cursor || svg).getBoundingClientRect());
  }
  function hideCell(svg) {
    const cursor = svg.querySelector("rect.cursor");
    if (cursor) cursor.setAttribute("visibility", "hidden");
    hide();
  }
  function showWord(box, k) {
    const words = box.querySelectorAll("[data-tip]");
    if (!words.length) return;
    k = Math.max(0, Math.min(words.length - 1, k));
    words.forEach((w, n) => w.classList.toggle("at", n === k));
    box.__at = k;
    show(words[k].dataset.tip, words[k].getBoundingClientRect());
  }

  document.addEventListener("mousemove", (event) => {
    const svg = event.target.closest && event.target.closest("svg.attn-map[data-v]");
    if (svg) {
      const g = grid(svg);
      const pt = svg.createSVGPoint();
      pt.x = event.clientX;
      pt.y = event.clientY;
      const local = pt.matrixTransform(svg.getScreenCTM().inverse());
      const j = Math.floor((local.x - g.x0) / g.cell);
      const i = Math.floor((local.y - g.y0) / g.cell);
      if (i >= 0 && j >= 0 && i < g.rows.length && j < g.cols.length) return showCell(svg, i, j);
      return hideCell(svg);
    }
    const word = event.target.closest && event.target.closest(".hl-words [data-tip]");
    if (word) return show(word.dataset.tip, word.getBoundingClientRect());
    if (tip && tip.style.display === "block" && !(document.activeElement && document.activeElement.matches
        && document.activeElement.matches("svg.attn-map, .hl-words"))) hide();
  }, { passive: true });

  document.addEventListener("focusin", (event) => {
    const el = event.target;
    if (el.matches && el.matches("svg.attn-map[data-v]")) showCell(el, ...(el.__at || [0, 0]), true);
    else if (el.matches && el.matches(".hl-words")) showWord(el, el.__at || 0);
  });
  document.addEventListener("focusout", (event) => {
    const el = event.target;
    if (el.matches && el.matches("svg.attn-map[data-v]")) hideCell(el);
    else if (el.matches && el.matches(".hl-words")) {
      el.querySelectorAll(".at").forEach((w) => w.classList.remove("at"));
      hide();
    }
  });
  const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
  document.addEventListener("keydown", (event) => {
    const el = event.target;
    const move = MOVES[event.key];
    if (!move || !el.matches) return;
    if (el.matches("svg.attn-map[data-v]")) {
      const g = grid(el);
      const [i, j] = el.__at || [0, 0];
      event.preventDefault();
      showCell(el, Math.max(0, Math.min(g.rows.length - 1, i + move[0])),
               Math.max(0, Math.min(g.cols.length - 1, j + move[1])), true);
    } else if (el.matches(".hl-words")) {
      event.preventDefault();
      showWord(el, (el.__at || 0) + move[0] + move[1]);
    }
  });
})();
