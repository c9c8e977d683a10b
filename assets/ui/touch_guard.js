// A finger on a slider's track (the game's panel and the live class's page both load this first): until the finger
// shows its way, the slider's input waits. Sideways (or a tap) moves it; up or down scrolls the page (the track's
// touch-action is pan-y) and the slider goes back to where it was, so a swipe to scroll never moves a head or counts
// as a move. `root`: where the sliders are; `selector`: what a slider is. A held move is let through as a fresh
// "input" event, so the page's own listeners see one move, once.
function guardSliderTouches(root, selector) {
  const SLOP = 8; // px a finger moves before its way counts
  let finger = null; // {el, from, x, y, way: null | "slide" | "scroll", pending}
  const back = (f) => { f.el.value = f.from; f.el.style.setProperty("--v", f.from); }; // the jump taken back
  const release = (f) => { f.way = "slide"; f.el.dispatchEvent(new Event("input", { bubbles: true })); };
  root.addEventListener("touchstart", (event) => {
    const slider = event.target.closest && event.target.closest(selector);
    finger = slider && event.touches.length === 1
      ? { el: slider, from: slider.value, x: event.touches[0].clientX, y: event.touches[0].clientY, way: null, pending: false }
      : null;
  }, { capture: true, passive: true });
  root.addEventListener("touchmove", (event) => {
    if (!finger || finger.way) return;
    const dx = Math.abs(event.touches[0].clientX - finger.x), dy = Math.abs(event.touches[0].clientY - finger.y);
    if (dy > SLOP && dy > dx) { finger.way = "scroll"; back(finger); }
    else if (dx > SLOP) { if (finger.pending) release(finger); else finger.way = "slide"; }
  }, { capture: true, passive: true });
  for (const type of ["touchend", "touchcancel"]) {
    root.addEventListener(type, () => {
      if (finger && finger.way === "scroll") back(finger);
      else if (finger && finger.way === null && finger.pending && type === "touchend") release(finger); // a tap
      finger = null;
    }, { capture: true, passive: true });
  }
  root.addEventListener("input", (event) => { // capture: before the page's own listeners
    if (!finger || event.target !== finger.el || finger.way === "slide") return;
    if (finger.way === "scroll") back(finger); // scrolling: the slider stays put
    else finger.pending = true; // the finger's way is not known yet
    event.stopImmediatePropagation();
  }, { capture: true });
}
