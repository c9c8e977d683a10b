// The 72 heads as an instrument (put before the lab's and the sandbox's scripts by ui/components.py): a tile that
// carries its row (data-row: the word's weight on every word, ui/widgets/heads_grid.py) is read out, when clicked or keyed
// to, in the .cb-detail box under the grid: each word with its weight as a bar and a number, the word itself and
// previous/next-word heads named; a click brings the readout into view. Arrow keys move between the tiles. Words
// are set as text, never as HTML.
function showHead(tile) {
  const grid = tile.closest(".cb-grid");
  const box = grid && grid.parentElement.querySelector(".cb-detail");
  if (!box || !tile.dataset.row) return;
  const tokens = JSON.parse(box.dataset.tokens || "[]");
  const word = Number(box.dataset.word);
  const row = tile.dataset.row.split(",").map(Number);
  grid.querySelectorAll(".cb-map.looked").forEach((el) => el.classList.remove("looked"));
  tile.classList.add("looked");
  box.replaceChildren();
  const title = document.createElement("div");
  title.className = "sub";
  const name = tile.querySelector(".cb-name");
  title.textContent = `${name ? name.firstChild.textContent.trim() : ""} · ${box.dataset.title || ""}`
    + (tile.dataset.kind ? ` · ${tile.dataset.kind}` : "");
  box.appendChild(title);
  const list = document.createElement("div");
  list.className = "bars cb-detail-bars";
  row.forEach((v, j) => {
    const line = document.createElement("div");
    line.className = "bar-row" + (j === word ? " self" : "");
    const label = document.createElement("span");
    label.className = "bar-name";
    label.textContent = tokens[j] === undefined ? String(j) : tokens[j];
    const track = document.createElement("span");
    track.className = "bar-track";
    const fill = document.createElement("span");
    fill.className = "bar";
    fill.style.background = "#1f4e9c";
    fill.style.width = `${Math.max(0, Math.min(1, v)) * 100}%`;
    track.appendChild(fill);
    const value = document.createElement("span");
    value.className = "bar-value";
    value.textContent = v.toFixed(2);
    line.append(label, track, value);
    list.appendChild(line);
  });
  box.appendChild(list);
}

element.addEventListener("click", (event) => {
  const tile = event.target.closest && event.target.closest(".cb-map[data-row]");
  if (!tile) return;
  showHead(tile);
  // a click (not the keyboard walking the tiles) asks to read the head: its readout comes into view, as little
  // scrolled as it takes
  const box = tile.closest(".cb-grid").parentElement.querySelector(".cb-detail");
  const r = box && box.getBoundingClientRect();
  if (r && (r.top < 0 || r.bottom > innerHeight)) box.scrollIntoView({ block: "nearest" });
});
element.addEventListener("focusin", (event) => {
  const tile = event.target.closest && event.target.closest(".cb-map[data-row]");
  if (tile) showHead(tile);
});
element.addEventListener("keydown", (event) => {
  const tile = event.target.closest && event.target.closest(".cb-map[data-row]");
  if (!tile || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(event.key)) return;
  const tiles = [...tile.closest(".cb-grid").querySelectorAll(".cb-map[data-row]")];
  const columns = getComputedStyle(tile.closest(".cb-grid")).gridTemplateColumns.split(" ").length || 1;
  const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns }[event.key];
  const next = tiles[tiles.indexOf(tile) + step];
  if (next) {
    event.preventDefault();
    next.focus();
  }
});
