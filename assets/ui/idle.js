// Runs first as the page starts: an idle page draws nothing. Gradio's status tracker counts an event's seconds in a
// requestAnimationFrame loop, and a tracker removed while its event was pending (the app's own "Loading…") never
// stops it: every open page then runs 60 callbacks a second for good (≈5 % of a core each; a class's laptops and
// phones pay it in battery, thirty pages on one machine a whole core). Those seconds are shown nowhere here (our
// stylesheet hides the tracker's text and bar; every wait is drawn by the page itself), so a frame the tracker asks
// for from inside its own frame — the loop — is not run; a single frame it asks for (a scroll) still is.
(function () {
  const frame = window.requestAnimationFrame;
  if (!frame || window.__dragonFrames) return;
  const state = (window.__dragonFrames = { skipped: 0, inTracker: false });
  const tracker = /\/statustracker-[^/]*\.js/;
  window.requestAnimationFrame = function (callback) {
    const caller = (new Error().stack || "").split("\n")[2] || ""; // [0] "Error", [1] here, [2] who asked
    if (!tracker.test(caller)) return frame.call(window, callback);
    if (state.inTracker) {
      state.skipped += 1;
      return 0;
    }
    return frame.call(window, (t) => {
      state.inTracker = true;
      try {
        callback(t);
      } finally {
        state.inTracker = false;
      }
    });
  };
})();
