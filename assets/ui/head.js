// Runs as the page starts: pick the language and projector mode from the link or the browser's memory,
// and tell Gradio's own translations (gr.I18n) which language to use.
(function () {
  const params = new URLSearchParams(location.search);
  let lang = params.get("lang") || localStorage.getItem("dragon-lang") || "zh";
  if (lang !== "zh" && lang !== "en") lang = "zh";
  localStorage.setItem("dragon-lang", lang);
  const locale = lang === "en" ? "en" : "zh-CN";
  try {
    Object.defineProperty(navigator, "language", { get: () => locale, configurable: true });
    Object.defineProperty(navigator, "languages", { get: () => [locale], configurable: true });
  } catch (e) { /* older browsers: Gradio falls back to the browser's own language */ }
  const p = params.get("projector");
  const projector = p === null ? localStorage.getItem("dragon-projector") === "1" : p === "1";
  localStorage.setItem("dragon-projector", projector ? "1" : "0");
  document.documentElement.lang = locale;
  window.__dragon = { lang: lang, level: (params.get("level") || "").slice(0, 20), projector: projector };
  const mark = () => document.body && document.body.classList.toggle("projector", projector);
  if (document.body) mark(); else document.addEventListener("DOMContentLoaded", mark);
  // Gradio injects this script after its translations started, so switch its locale the way its own
  // Settings panel does: changeLocale() from the already-loaded core module.
  let tries = 0;
  const setLocale = () => {
    const core = performance.getEntriesByType("resource").map((e) => e.name)
      .find((n) => /\/assets\/core-[^/]+\.js$/.test(n));
    if (core) {
      import(core).then((m) => m.changeLocale && m.changeLocale(locale)).catch(() => {});
    } else if (tries++ < 20) {
      setTimeout(setLocale, 150);
    }
  };
  setLocale();
})();
