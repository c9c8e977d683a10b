// The live class's page (ui/live_class/routes.py): the teacher's board and controls, the projector's read-only board (its own
// key, never the teacher's secret), or a student's part of the round.
// Every text a class typed (nicknames) goes into the page as text (textContent), never as HTML.
(() => {
  "use strict";
  const T = JSON.parse(document.getElementById("class-strings").textContent); // ui/strings.py, class.*
  const role = document.body.dataset.role;
  const params = new URLSearchParams(location.search);
  let lang = params.get("lang") === "en" || (!params.get("lang") && (localStorage.getItem("dragon.class.lang") || "") === "en") ? "en" : "zh";
  let heads = []; // [{id, zh, en, color}]
  let levels = { dragon: [], all: [] };
  const t = (key) => T[lang][key] ?? key;
  const fill = (text, detail) => text.replace(/\{(\w+)\}/g, (_, k) => String(detail?.[k] ?? ""));

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "style") node.style.cssText = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== false && v != null) node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const child of children.flat()) if (child != null) node.append(child instanceof Node ? child : String(child));
    return node;
  }
  const $ = (id) => document.getElementById(id);
  const show = (id, on = true) => { $(id).hidden = !on; };
  const headName = (h) => (heads[h] ? heads[h][lang] : String(h));
  const headColor = (h) => (heads[h] ? heads[h].color : "#7b3fbf");
  const evenly = (links) => links.length > 1 && links.every((l) => l.from === links[0].from && Math.abs(l.weight - links[0].weight) < 0.01);
  const starsText = (n) => el("span", { class: "stars", "aria-label": `${n}/3` }, "★".repeat(n), el("span", { class: "off" }, "★".repeat(3 - n)));

  // a notice keeps its kind ("network", "server", a refusal's reason…), so a request that succeeds again clears only what it answers
  let noticeWords = null; // the shown notice's words as a function: said again in the other language on a switch
  function notice(text, ok = false, kind = "") {
    const box = $("notice");
    noticeWords = typeof text === "function" ? [text, ok, kind] : null;
    if (typeof text === "function") text = text();
    box.textContent = text || "";
    box.classList.toggle("ok", ok);
    box.dataset.kind = text ? kind : "";
    box.hidden = !text;
  }
  const unreachable = (err) => err?.error === "network" || err?.error === "server";
  function clearUnreachable() {
    if (["network", "server"].includes($("notice").dataset.kind)) notice("");
  }
  function errorText(body) {
    const words = T[lang].errors[body?.error] || T[lang].errors.server;
    const detail = { ...(body?.detail || {}), message: body?.message || "" };
    if (typeof detail.wait_s === "number") detail.wait_s = Math.max(1, Math.ceil(detail.wait_s));
    return fill(words, detail);
  }
  const refusal = (err) => notice(() => errorText(err), false, err?.error || "server");
  // Polls overlap (one every 600 ms, one after each action): an answer is used only when no answer asked for later has
  // been used, so a view that left the server before a removal or a new round never draws the class as it was.
  function newestOnly(fetchView) {
    let asked = 0, used = 0;
    return async () => {
      const n = ++asked;
      const out = await fetchView();
      if (n < used) return null;
      used = n;
      return out;
    };
  }
  async function api(name, body) {
    let response;
    try {
      response = await fetch(`/class/api/${name}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    } catch (_) {
      throw { error: "network" };
    }
    let data = {};
    try { data = await response.json(); } catch (_) { data = { error: "server" }; }
    if (!response.ok) throw response.status >= 500 && !data.error ? { error: "server" } : data;
    return data;
  }
  function translate() {
    document.documentElement.lang = lang === "zh" ? "zh" : "en";
    for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
    for (const node of document.querySelectorAll("[data-tl]")) node.setAttribute("aria-label", t(node.dataset.tl));
    for (const b of document.querySelectorAll("[data-lang]")) b.setAttribute("aria-pressed", String(b.dataset.lang === lang));
  }
  async function loadLevels() {
    const r = await fetch(`/class/api/levels?lang=${lang}`);
    const data = await r.json();
    levels = data;
    heads = data.heads;
  }
  for (const b of document.querySelectorAll("[data-lang]")) {
    b.addEventListener("click", async () => {
      lang = b.dataset.lang;
      localStorage.setItem("dragon.class.lang", lang);
      translate();
      if (noticeWords && !$("notice").hidden) notice(...noticeWords);
      await loadLevels();
      if (role === "teach") { fillLevelPicks(); followPageLanguage(); }
      redraw();
    });
  }
  guardSliderTouches(document, "input[type=range]"); // assets/ui/touch_guard.js, loaded before this script

  let redraw = () => {};

  // --- the teacher ------------------------------------------------------------------------------------------------
  function teacherCreds() {
    const h = new URLSearchParams(location.hash.slice(1));
    return h.get("code") && h.get("secret") ? { code: h.get("code"), secret: h.get("secret") } : null;
  }
  function followPageLanguage() { // the text-language boxes say the page's language until the teacher picks one
    for (const id of ["dragon-lang", "everyone-lang"]) if (!$(id).dataset.picked) $(id).value = lang;
  }
  function fillLevelPicks() {
    for (const [id, list] of [["dragon-level", levels.dragon], ["everyone-level", levels.all]]) {
      const pick = $(id), was = pick.value;
      pick.replaceChildren(...list.map((lv) => el("option", { value: lv.id, "data-exam": lv.exam ? "1" : "0" }, `${lv.id} · ${lv.title}`)));
      if (was) pick.value = was;
    }
  }
  async function teacher() {
    let creds = teacherCreds();
    if (!creds) {
      show("start");
      $("open").addEventListener("click", async () => {
        $("open").disabled = true;
        try {
          const made = await api("open", {});
          location.hash = `code=${made.code}&secret=${made.secret}`;
          show("start", false);
          creds = { ...teacherCreds(), projector: made.projector };
          runTeacher(creds);
        } catch (err) {
          notice(errorText(err));
          $("open").disabled = false;
        }
      }, { once: false });
      return;
    }
    runTeacher(creds);
  }
  async function runTeacher(creds) {
    const ask = (action, extra = {}) => api("teacher", { code: creds.code, secret: creds.secret, action, ...extra });
    let view = null, projectorKey = creds.projector || "";
    const selected = new Set(); // the members ticked for "remove selected"
    show("teach");
    fillLevelPicks();
    followPageLanguage();
    for (const id of ["dragon-lang", "everyone-lang"]) $(id).addEventListener("change", () => { $(id).dataset.picked = "1"; });
    $("secret-link").value = location.href;
    if (!(await showQr(ask))) return;
    const act = async (action, extra) => {
      try {
        const out = await ask(action, extra);
        notice("");
        await poll();
        return out;
      } catch (err) {
        refusal(err);
        return null;
      }
    };
    const removeMembers = async (ids) => {
      const out = await act("remove", ids.length === 1 ? { member: ids[0] } : { members: ids });
      if (out) {
        for (const id of ids) selected.delete(id);
        notice(fill(t("removed_n"), { n: out.removed ?? ids.length }), true, "done");
        if (view) drawMembers(view, controls);
      }
    };
    const controls = { selected, remove: removeMembers, changed: () => { $("remove-selected").disabled = !selected.size; } };
    $("start-dragon").addEventListener("click", () => act("start", {
      kind: "dragon", level: $("dragon-code").value.trim() ? "" : $("dragon-level").value,
      level_code: $("dragon-code").value.trim(), lang: $("dragon-lang").value }));
    $("start-everyone").addEventListener("click", () => act("start", { kind: "everyone", level: $("everyone-level").value, lang: $("everyone-lang").value }));
    $("end-round").addEventListener("click", () => view?.round && act("end_round", { round: view.round.id }));
    $("show-target").addEventListener("click", () => view?.round && act("show_target", { round: view.round.id }));
    $("remove-selected").addEventListener("click", () => selected.size && removeMembers([...selected]));
    $("show-names").addEventListener("change", (e) => act("settings", { settings: { show_names: e.target.checked } }));
    $("exam").addEventListener("change", (e) => act("settings", { settings: { exam: e.target.checked } }));
    $("locked").addEventListener("change", (e) => act("settings", { settings: { locked: e.target.checked } }));
    $("size").addEventListener("change", (e) => {
      const size = Number(e.target.value);
      if (!Number.isInteger(size) || size < 2 || size > 200) { notice(t("size_bad"), false, "size"); return; }
      act("settings", { settings: { size } });
    });
    $("copy-projector").addEventListener("click", () => copyLink($("projector-link")));
    $("hide-controls").addEventListener("click", () => { document.body.classList.add("projector"); show("show-controls"); });
    $("show-controls").addEventListener("click", () => { document.body.classList.remove("projector"); show("show-controls", false); });
    $("csv").addEventListener("click", async () => {
      const out = await act("csv");
      if (!out) return;
      const link = el("a", { href: URL.createObjectURL(new Blob(["\ufeff" + out.csv], { type: "text/csv;charset=utf-8" })), download: `class-${creds.code}.csv` });
      document.body.append(link);
      link.click();
      link.remove();
    });
    $("end-class").addEventListener("click", async () => {
      if (!confirm(t("confirm_end"))) return;
      const out = await act("end_class");
      if (out) { location.hash = ""; location.reload(); }
    });
    const showProjectorLink = (key) => {
      $("projector-box").hidden = !key; // no key from the server: no link to give
      if (!key || key === projectorKey && $("projector-link").value) return;
      projectorKey = key;
      const link = `${location.origin}/class/projector?lang=${lang}#code=${encodeURIComponent(creds.code)}&key=${encodeURIComponent(key)}`;
      $("projector-link").value = link;
      $("open-projector").href = link;
    };
    showProjectorLink(projectorKey);
    const viewNow = newestOnly(() => ask("view", { lang }));
    async function poll() {
      try {
        const fresh = await viewNow();
        if (!fresh) return;
        view = fresh;
        clearUnreachable();
        showProjectorLink(view.projector);
        drawClass(view, controls);
        drawTeacherControls(view);
      } catch (err) {
        refusal(err);
        if (err.error === "class.unknown") { clearInterval(timer); }
      }
    }
    redraw = () => { if (view) { drawClass(view, controls); drawTeacherControls(view); } poll(); };
    const timer = setInterval(poll, 600);
    poll();
  }
  // the join link and its QR code, made by the server from the page's origin; false when the class is not there
  async function showQr(ask) {
    try {
      const qr = await ask("qr", { origin: location.origin });
      $("qr").innerHTML = qr.svg; // made by the server (segno) from the page's origin and the class code: no typed text
      const svg = $("qr").querySelector("svg"); // scaled by the page's CSS, not cut: its own size becomes its viewBox
      if (svg && !svg.getAttribute("viewBox") && svg.getAttribute("width")) {
        svg.setAttribute("viewBox", `0 0 ${svg.getAttribute("width")} ${svg.getAttribute("height") || svg.getAttribute("width")}`);
        svg.removeAttribute("width");
        svg.removeAttribute("height");
      }
      $("qr").setAttribute("aria-label", qr.url);
      $("join-url").textContent = qr.url;
      $("join-url").href = qr.url;
      return true;
    } catch (err) {
      refusal(err);
      return !(err.error === "class.unknown" || err.error === "teacher.wrong_secret");
    }
  }
  async function copyLink(input) {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value);
      notice(t("copied"), true, "done");
    } catch (_) {
      notice(document.execCommand && document.execCommand("copy") ? t("copied") : t("copy_failed"), true, "done");
    }
  }
  function markExamLevels(exam) { // in an exam only levels with a fresh variant can start (the server refuses the rest)
    for (const id of ["dragon-level", "everyone-level"]) {
      for (const o of $(id).options) {
        const no = exam && o.dataset.exam === "0";
        o.disabled = no;
        o.textContent = o.textContent.replace(` · ${t("no_exam")}`, "") + (no ? ` · ${t("no_exam")}` : "");
      }
      const pick = $(id);
      if (pick.selectedOptions[0]?.disabled) pick.value = [...pick.options].find((o) => !o.disabled)?.value ?? "";
    }
  }
  function drawTeacherControls(view) {
    const s = view.settings, r = view.round;
    for (const [id, key] of [["show-names", "show_names"], ["exam", "exam"], ["locked", "locked"]]) if (document.activeElement !== $(id)) $(id).checked = Boolean(s[key]);
    if (document.activeElement !== $("size") && s.size != null) $("size").value = String(s.size);
    markExamLevels(Boolean(s.exam));
    // the target can be shown during an open round, never in an exam (the server refuses it too)
    $("show-target").hidden = !(r && r.open && !roundExam(r, view) && !r.target_shown && (r.kind === "dragon" || r.level?.sliders));
    $("end-round").disabled = !(r && r.open);
  }
  const roundExam = (r, view) => (r.exam ?? view.exam ?? view.settings?.exam) === true;

  // --- the projector: the class's board on its own read-only link (#code=…&key=…), no control and no secret -----
  const TEACHER_ONLY = ["start", "secret-box", "controls", "show-controls", "summary", "projector-box", "member-tools"];
  async function projector() {
    for (const id of TEACHER_ONLY) $(id)?.remove();
    const h = new URLSearchParams(location.hash.slice(1));
    const creds = h.get("code") && h.get("key") ? { code: h.get("code"), key: h.get("key") } : null;
    if (!creds) { notice(t("projector_bad"), false, "link"); return; }
    const ask = (action, extra = {}) => api("projector", { code: creds.code, key: creds.key, action, ...extra });
    let view = null;
    show("teach");
    if (!(await showQr(ask))) return;
    const viewNow = newestOnly(() => ask("view", { lang }));
    async function poll() {
      try {
        const fresh = await viewNow();
        if (!fresh) return;
        view = fresh;
        clearUnreachable();
        drawClass(view, null);
      } catch (err) {
        refusal(err);
        if (err.error === "class.unknown") clearInterval(timer);
      }
    }
    redraw = () => { if (view) drawClass(view, null); poll(); };
    const timer = setInterval(poll, 600);
    poll();
  }

  // --- what the teacher's page and the projector both show ---------------------------------------------------------
  function drawClass(view, controls) {
    $("code").textContent = view.code;
    drawMembers(view, controls);
    $("join-card").classList.toggle("compact", Boolean(view.round));
    $("board").replaceChildren(view.round ? board(view.round, view) : el("p", { class: "lead" }, t(controls ? "no_round" : "no_round_projector")));
    if (controls) $("summary").replaceChildren(summaryTable(view.summary));
  }
  // the members, drawn again only when they change (a ticked box stays ticked between polls); left ones greyed
  let membersKey = "";
  function drawMembers(view, controls) {
    const members = view.members || [];
    const key = JSON.stringify([members, lang, controls ? [...controls.selected] : null]);
    if (key === membersKey) return;
    membersKey = key;
    $("count").textContent = String(members.filter((m) => (m.status || "active") === "active").length);
    $("members").replaceChildren(...(members.length ? members.map((m) => memberItem(m, controls)) : [el("li", {}, t("no_members"))]));
    if (controls) controls.changed();
  }
  function memberItem(m, controls) {
    const left = (m.status || "active") !== "active";
    const item = el("li", { class: left ? "left" : null, "data-status": m.status || "active" });
    if (controls) {
      const box = el("input", { type: "checkbox", "data-member": m.id, "aria-label": fill(t("select_one"), { name: m.nickname }), checked: controls.selected.has(m.id) });
      box.addEventListener("change", () => {
        if (box.checked) controls.selected.add(m.id); else controls.selected.delete(m.id);
        controls.changed();
      });
      item.append(box);
    }
    item.append(el("span", {}, m.nickname));
    if (left) item.append(el("small", { class: "status" }, t("left")));
    if (controls) item.append(el("button", { type: "button", title: "×", "aria-label": fill(t("remove_one"), { name: m.nickname }), onclick: () => controls.remove([m.id]) }, "×"));
    return item;
  }
  function board(r, view) {
    const exam = roundExam(r, view);
    const title = el("h2", {}, `${t("kinds")[r.kind]} · ${r.level.id} ${r.level.title}`, exam ? el("span", { class: "badge" }, t("exam_badge")) : null,
      r.open ? "" : ` — ${t("round_ended")}`);
    // the level's why (plain text, or {zh, en}): after the round, the moment for the class discussion
    const whyText = r.why == null ? "" : typeof r.why === "string" ? r.why : r.why[lang] || r.why.en || r.why.zh || "";
    const why = whyText ? el("div", { class: "why" }, el("h3", {}, t("why_title")), el("p", {}, whyText)) : null;
    if (r.kind === "dragon") {
      const target = Array.isArray(r.target) ? r.target : null;
      return el("div", {}, title,
        r.won ? el("p", { class: "won" }, t("won")) : null,
        el("p", { class: "text" }, r.text),
        el("div", { class: "scoreline" }, el("span", {}, t("class_score")), el("span", { class: "score", "data-score": r.score }, r.score.toFixed(1)), starsText(r.stars)),
        el("div", { class: "heads" }, r.gates.map((g, h) => headCard(r, g, h, target))),
        playedLine(r, view), why);
    }
    const total = Object.values(r.stars_count).reduce((a, b) => a + b, 0) || 1;
    const parts = [title, el("div", { class: r.spread ? "tally with-spread" : "tally" }, el("div", {}, el("h3", {}, t("stars_count"), r.not_yet ? el("span", { class: "not-yet" }, ` · ${t("not_played")}: ${r.not_yet}`) : null),
      el("div", { class: "hist" }, ["0", "1", "2", "3"].map((s) => el("div", {},
        el("span", {}, String(r.stars_count[s])), el("b", { style: `height:${(100 * r.stars_count[s]) / total}%` }),
        el("span", {}, s === "0" ? "☆" : "★".repeat(Number(s))))))),
      r.spread ? el("div", {}, el("h3", {}, r.spread.some((s) => s.target != null) ? t("spread") : t("spread_open")), spreadChart(r.spread)) : null)];
    if (exam && r.open) parts.push(el("p", { class: "help" }, t("exam_round")));
    if (r.progress) parts.push(progressTable(r.progress));
    else if (r.players?.length) parts.push(el("h3", {}, t("players")), el("ul", { class: "players" }, r.players.map((p) => el("li", {}, `${p.nickname} `, starsText(p.stars)))));
    parts.push(why);
    return el("div", {}, parts);
  }
  function headCard(r, g, h, target) {
    const holders = Array.isArray(r.holders?.[h]) ? r.holders[h] : null; // names (a number when names are hidden: the team size says it)
    return el("div", { class: "head", style: `--c:${headColor(h)}` },
      el("h3", {}, `${h + 1} · ${headName(h)}`),
      el("div", { class: "meter", role: "meter", "aria-valuemin": 0, "aria-valuemax": 1, "aria-valuenow": g },
        el("i", { style: `width:${(g * 100).toFixed(1)}%` }),
        target ? el("em", { class: "mark", style: `left:${(target[h] * 100).toFixed(1)}%`, "aria-hidden": "true" }, "◆") : null),
      target ? el("span", { class: "value target-vs" }, fill(t("target_vs"), { target: target[h].toFixed(2), class: g.toFixed(2) }))
        : el("span", { class: "value" }, g.toFixed(2)), " ",
      el("span", { class: "team" }, `${t("team")}: ${r.teams[h]} · ${r.moved[h] ? t("moved") : t("not_moved")}`),
      holders ? el("p", { class: "holders" }, `${t("holders")} `, holders.length ? holders.join("、") : t("nobody")) : null);
  }
  // a class dragon's players (with names shown): who has moved their head, and the seat-holders who have not yet
  function playedLine(r, view) {
    if (!Array.isArray(r.players)) return null;
    const yes = r.players.filter((p) => (p.moves ?? 1) > 0).map((p) => p.nickname);
    const holding = Array.isArray(r.holders) ? r.holders.filter(Array.isArray).flat()
      : (view.members || []).filter((m) => (m.status || "active") === "active").map((m) => m.nickname);
    const no = [...new Set(holding)].filter((n) => !yes.includes(n));
    return el("p", { class: "played" }, el("b", {}, `${t("have_played")} `), yes.length ? yes.join("、") : t("nobody"),
      no.length ? el("span", { class: "not-yet" }, ` · ${t("not_moved_yet")} ${no.join("、")}`) : null);
  }
  function progressTable(rows) {
    const yes = (v) => (v ? "✓" : "·");
    return el("div", { class: "progress" }, el("h3", {}, t("progress")), el("table", {},
      el("tr", {}, [t("student"), t("started"), t("answered"), t("stars")].map((h) => el("th", {}, h))),
      rows.map((p, k) => el("tr", {}, el("td", {}, p.nickname || `#${k + 1}`), el("td", {}, yes(p.started)), el("td", {}, yes(p.answered)), el("td", {}, starsText(p.stars || 0))))));
  }
  function spreadChart(spread) {
    // on the projector the chart's words are ≥ 24 px at its drawn size (the svg is at least W px wide there)
    const big = role === "projector";
    const ns = "http://www.w3.org/2000/svg", W = 900, row = big ? 44 : 34, left = big ? 230 : 150, right = W - 20, font = big ? 24 : 16;
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", `0 0 ${W} ${row * spread.length + 40}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", spread.some((s) => s.target != null) ? t("spread") : t("spread_open"));
    const add = (tag, attrs, text) => {
      const node = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
      if (text != null) node.textContent = text;
      svg.append(node);
      return node;
    };
    const x = (v) => left + v * (right - left);
    spread.forEach((s, h) => {
      const y = 22 + h * row;
      add("text", { x: 4, y: y + 7, "font-size": font, fill: headColor(h) }, `${h + 1} ${headName(h)} (${s.count})`);
      add("line", { x1: x(0), x2: x(1), y1: y, y2: y, stroke: "#e5e7eb" });
      if (s.count) {
        add("line", { x1: x(s.min), x2: x(s.max), y1: y, y2: y, stroke: headColor(h), "stroke-width": 2 });
        add("rect", { x: x(s.q1), y: y - 9, width: Math.max(2, x(s.q3) - x(s.q1)), height: 18, fill: headColor(h), "fill-opacity": 0.35, stroke: headColor(h) });
        add("line", { x1: x(s.median), x2: x(s.median), y1: y - 10, y2: y + 10, stroke: "#111827", "stroke-width": 2 });
      }
      // the target only when the server sends it: after the round, or shown by the teacher (never in an open exam)
      if (s.target != null) add("text", { class: "target", x: x(s.target) - font / 2.4, y: y + font / 3, "font-size": font + 2, fill: "#111827" }, "◆");
    });
    for (const v of [0, 0.5, 1]) add("text", { x: x(v) - 8, y: row * spread.length + 34, "font-size": big ? 24 : 14, fill: "#4b5563" }, String(v));
    return el("div", { class: "spread" }, svg);
  }
  function summaryTable(rows) {
    if (!rows.length) return el("div");
    return el("div", {}, el("h3", {}, t("summary")), el("table", {},
      el("tr", {}, [t("round"), t("kind"), t("level"), t("played"), t("mean_best"), "☆ / ★ / ★★ / ★★★", t("class_best")].map((h) => el("th", {}, h))),
      rows.map((r) => el("tr", {}, el("td", {}, r.round), el("td", {}, t("kinds")[r.kind]), el("td", {}, r.level), el("td", {}, r.players),
        el("td", {}, r.mean_best ?? "—"), el("td", {}, ["0", "1", "2", "3"].map((s) => r.stars_count[s]).join(" / ")),
        el("td", {}, r.class_score == null ? "—" : `${r.class_score.toFixed(1)} (${r.class_stars}★)`)))));
  }

  // --- a student -------------------------------------------------------------------------------------------------
  const keyFor = (code) => `dragon.class.${code}`;
  // this browser's random id, sent with a join: a removed student cannot come back from the same browser under a new name
  function browserId() {
    let id = localStorage.getItem("dragon.class.browser") || "";
    if (!/^[0-9a-f]{32}$/.test(id)) {
      id = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem("dragon.class.browser", id);
    }
    return id;
  }
  async function student() {
    const code = (params.get("code") || "").toUpperCase();
    $("join-code").value = code;
    const saved = code && JSON.parse(localStorage.getItem(keyFor(code)) || "null");
    if (saved?.token) return play(saved);
    show("join");
    $("join-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      notice("");
      try {
        const made = await api("join", { code: $("join-code").value, nickname: $("nickname").value, browser: browserId() });
        localStorage.setItem(keyFor(made.code), JSON.stringify(made));
        localStorage.setItem("dragon.class.current", made.token);
        history.replaceState(null, "", `/class/join?code=${made.code}`);
        show("join", false);
        notice("");
        play(made);
      } catch (err) {
        refusal(err);
      }
    });
  }
  function play(me) {
    show("play");
    localStorage.setItem("dragon.class.current", me.token);
    $("my-name").textContent = me.nickname;
    $("my-code").textContent = me.code;
    let view = null, shownKey = "", dragging = new Set(), pending = new Map(), timer = null;
    const unsent = new Map(); // per slider, the last move the server never got (it was down): sent again when it is back
    $("leave").addEventListener("click", async () => {
      try { await api("student", { token: me.token, action: "leave" }); } catch (_) { /* gone already */ }
      localStorage.removeItem(keyFor(me.code));
      localStorage.removeItem("dragon.class.current");
      location.href = "/class/join";
    });
    // a request; a move (`key`: its slider) the server did not get is kept to be sent again, and said so
    const send = async (body, key = null, again = false) => {
      try {
        const out = await api("student", { token: me.token, ...body });
        if (again) notice(() => t("resent"), true, "resent"); else notice("");
        return out;
      } catch (err) {
        if (key != null && unreachable(err)) {
          unsent.set(key, body);
          notice(() => t("net_unsaved"), false, err.error);
        } else if (again) {
          notice(() => fill(t("not_saved"), { reason: errorText(err) }), false, "not_saved");
        } else {
          refusal(err);
          if (err.error === "move.too_fast") setTimeout(() => send(body, key).then(after), 1000 * (err.detail?.wait_s || 0.5));
        }
        return null;
      }
    };
    let after = () => {};
    // a slider sends at most one move every 250 ms, and always its last value
    function throttled(key, make, again = false) {
      if (pending.has(key)) { pending.get(key).next = make; return; }
      unsent.delete(key); // a newer move replaces the one not sent
      const slot = { next: null };
      pending.set(key, slot);
      send(make(), key, again).then(after).finally(() => setTimeout(() => {
        pending.delete(key);
        if (slot.next) throttled(key, slot.next);
      }, 250));
    }
    // the server answers again: its notice goes, and each move it missed is sent (the last one per slider)
    function backAgain() {
      clearUnreachable();
      for (const [key, body] of [...unsent]) throttled(key, () => body, true);
    }
    const viewNow = newestOnly(() => api("student", { token: me.token, action: "view", lang }));
    async function poll() {
      try {
        const fresh = await viewNow();
        if (!fresh) return;
        view = fresh;
        backAgain();
        draw();
      } catch (err) {
        if (unsent.size && unreachable(err)) notice(() => t("net_unsaved"), false, err.error);
        else refusal(err);
        if (err.error === "member.unknown" || err.error === "member.removed") {
          clearInterval(timer);
          notice("");
          localStorage.removeItem(keyFor(me.code));
          localStorage.removeItem("dragon.class.current");
          $("leave").hidden = true;
          $("mine").replaceChildren(el("p", { class: "lead" }, t("removed")), el("a", { class: "button", href: "/class/join" }, t("join_other")));
        }
      }
    }
    function draw() {
      const r = view.round;
      // a round that ends, or an exam switched on or off, is drawn again
      const key = r ? `${r.id}/${r.kind}/${r.open}/${r.exam ?? view.exam}/${lang}` : `none/${lang}`;
      if (key !== shownKey) {
        if (shownKey) notice("");
        shownKey = key;
        $("mine").replaceChildren(r ? (r.kind === "dragon" ? dragonPart(r) : everyonePart(r)) : el("p", { class: "lead" }, t("waiting")));
      }
      if (!r) return;
      if (r.kind === "dragon") {
        const s = $("my-score");
        s.textContent = r.score.toFixed(1);
        s.dataset.score = r.score;
        $("my-stars").replaceChildren(starsText(r.stars));
        for (const m of r.mine) {
          const slider = $(`head-${m.head}`);
          if (slider && !dragging.has(m.head) && !pending.has(m.head) && !unsent.has(m.head)) { slider.value = m.gate; $(`head-${m.head}-v`).textContent = Number(m.gate).toFixed(2); }
          $(`head-${m.head}-team`).textContent = `${t("team")}: ${m.team} · ${t("class_value")}: ${m.class_gate.toFixed(2)}`;
        }
      } else {
        $("my-best").textContent = r.best == null ? "—" : r.best.toFixed(1);
        $("my-best-stars").replaceChildren(starsText(r.stars));
      }
    }
    function dragonPart(r) {
      after = (out) => {
        if (!out) return;
        $("my-score").textContent = out.score.toFixed(1);
        $("my-score").dataset.score = out.score;
        $("my-stars").replaceChildren(starsText(out.stars));
        if (out.won) poll();
      };
      const part = el("div", {}, el("p", { class: "text" }, r.story),
        el("h2", {}, `${r.level.id} · ${r.level.title}`), el("p", { class: "text" }, r.text),
        r.open ? el("p", { class: "goal" }, t("dragon_goal")) : null,
        el("div", { class: "scoreline" }, el("span", {}, t("class_score")), el("span", { class: "score", id: "my-score" }, r.score.toFixed(1)), el("span", { id: "my-stars" })),
        r.won ? el("p", { class: "won" }, t("won")) : r.open ? null : el("p", { class: "lead" }, t("ended")));
      for (const m of r.mine) {
        const slider = el("input", { type: "range", min: 0, max: 1, step: 0.01, value: m.gate, id: `head-${m.head}`, "aria-label": headName(m.head), disabled: !r.open });
        slider.addEventListener("pointerdown", () => dragging.add(m.head));
        slider.addEventListener("pointerup", () => dragging.delete(m.head));
        slider.addEventListener("pointercancel", () => dragging.delete(m.head)); // a swipe that scrolled
        slider.addEventListener("input", () => {
          $(`head-${m.head}-v`).textContent = Number(slider.value).toFixed(2);
          throttled(m.head, () => ({ action: "move", round: r.id, head: m.head, gate: Number(slider.value) }));
        });
        part.append(el("div", { class: "mine-head", style: `--c:${headColor(m.head)}` },
          el("h3", {}, `${t("your_head")}: ${m.head + 1} · ${headName(m.head)}`),
          slider, el("span", { class: "value", id: `head-${m.head}-v` }, Number(m.gate).toFixed(2)), " ",
          el("span", { id: `head-${m.head}-team`, class: "team" }),
          headWords(m)));
      }
      return part;
    }
    // what a head hears and finds; a silent head says only that it is silent
    function headWords(m) {
      if (m.hears?.silent) return [el("p", { class: "hears silent" }, t("hears_silent"))];
      const links = m.links || [];
      return [m.hears?.words ? el("p", { class: "hears" }, `${t("hears")} ${m.hears.words.map((w) => `${w.word} ${Math.round(100 * w.share)}%`).join(" · ")}`) : null,
        links.length ? el("p", {}, t("finds")) : null,
        !links.length ? null : evenly(links) ? el("p", { class: "links" }, `${t("links_even")} ${links[0].from} → ${links.map((l) => l.to).join("、")} (${links[0].weight.toFixed(2)})`)
          : el("ul", { class: "links" }, links.map((l) => el("li", {}, `${l.from} → ${l.to}  ${l.weight.toFixed(2)}`)))];
    }
    function everyonePart(r) {
      const head = el("div", {}, el("h2", {}, `${r.level.id} · ${r.level.title}`),
        r.open ? null : el("p", { class: "lead ended" }, t("ended")),
        el("p", { class: "scoreline" }, el("span", {}, `${t("best")}: `), el("b", { id: "my-best" }, "—"), el("span", { id: "my-best-stars" })));
      if (!r.open) return head; // the game's frame goes with the round: nothing left to play here
      if (!r.level.sliders) {
        const src = `/?level=${encodeURIComponent(r.level.id)}&lang=${r.lang}&classplay=1${r.exam ?? view.exam ? "&exam=1" : ""}`
          + (r.level_code ? `&custom=${encodeURIComponent(r.level_code)}` : "");
        head.append(el("p", {}, t("play_in_game")));
        if (r.exam ?? view.exam) head.append(el("p", { class: "help" }, t("exam_lab")));
        head.append(el("iframe", { class: "game-frame", src, title: r.level.title }));
        return head;
      }
      after = (out) => {
        if (!out) return;
        $("my-score").textContent = out.score.toFixed(1);
        $("my-best").textContent = out.best.toFixed(1);
        $("my-best-stars").replaceChildren(starsText(out.best_stars));
      };
      const gates = () => r.heads.map((_, h) => Number($(`g-${h}`).value));
      head.append(el("p", { class: "text" }, r.story), el("p", { class: "text" }, r.text), el("p", { class: "goal" }, t("everyone_goal")),
        el("div", { class: "scoreline" }, el("span", {}, t("your_score")), el("span", { class: "score", id: "my-score" }, r.score == null ? "—" : r.score.toFixed(1))),
        el("div", { class: "sliders" }, r.heads.map((_, h) => el("label", { style: `--c:${headColor(h)}` },
          el("span", {}, `${h + 1} ${headName(h)}`),
          el("input", { type: "range", min: 0, max: 1, step: 0.01, value: r.gates[h], id: `g-${h}`, disabled: !r.open,
            oninput: (e) => { $(`g-${h}-v`).textContent = Number(e.target.value).toFixed(2); throttled("all", () => ({ action: "play", round: r.id, gates: gates() })); } }),
          el("span", { id: `g-${h}-v` }, Number(r.gates[h]).toFixed(2))))));
      if (r.exam ?? view.exam) head.append(el("p", { class: "help" }, t("exam_on")));
      else head.append(el("button", { type: "button", id: "hint", onclick: async () => {
        const out = await send({ action: "hint", round: r.id, gates: gates() });
        if (out) notice(fill(t("hint_says"), { head: headName(out.head), dir: out.direction > 0 ? t("up") : t("down") }), true);
      } }, t("hint")));
      return head;
    }
    redraw = () => { shownKey = ""; poll(); }; // the story and the lines come again in the new language (asked anew)
    timer = setInterval(poll, 1000);
    poll();
  }

  translate();
  const starts = { teach: () => teacher(), projector: () => projector() };
  loadLevels().then(() => (starts[role] || student)()).catch(() => notice(T[lang].errors.network, false, "network"));
})();
