// Files the classroom takes away: a download of any text or Blob, an SVG drawn to a PNG at 2× (the maps), and a
// print-styled HTML page (worksheet, report) printed from a hidden frame. The page's buttons call these.
(function () {
  function download(name, content, mime) {
    const blob = content instanceof Blob ? content : new Blob([content], { type: mime || "application/octet-stream" });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.style.display = "none";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000); // some browsers read the URL after click() returns
    return blob;
  }

  // The SVG's own width and height (explicit in every SVG we export), for the canvas size.
  function svgSize(svg) {
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    const root = doc.documentElement;
    const w = parseFloat(root.getAttribute("width"));
    const h = parseFloat(root.getAttribute("height"));
    if (!(w > 0 && h > 0)) throw new Error("the SVG needs an explicit width and height");
    return [w, h];
  }

  const MAX_SIDE = 16384, MAX_AREA = 1e8; // what every browser's canvas holds; a bigger picture is drawn smaller

  function svgToPng(svg, scale) {
    return new Promise((resolve, reject) => {
      let size;
      try {
        size = svgSize(svg);
      } catch (err) {
        reject(err);
        return;
      }
      const s = Math.min(scale || 2, MAX_SIDE / size[0], MAX_SIDE / size[1], Math.sqrt(MAX_AREA / (size[0] * size[1])));
      const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml;charset=utf-8" }));
      const img = new Image();
      img.onload = () => {
        try {
          const canvas = document.createElement("canvas");
          canvas.width = Math.round(size[0] * s);
          canvas.height = Math.round(size[1] * s);
          const ctx = canvas.getContext("2d");
          ctx.fillStyle = "#fff";
          ctx.fillRect(0, 0, canvas.width, canvas.height);
          ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
          URL.revokeObjectURL(url);
          canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the canvas gave no PNG"))), "image/png");
        } catch (err) {
          URL.revokeObjectURL(url);
          reject(err);
        }
      };
      img.onerror = () => {
        URL.revokeObjectURL(url);
        reject(new Error("the SVG could not be drawn as an image"));
      };
      img.src = url;
    });
  }

  function downloadPng(name, svg, scale) {
    return svgToPng(svg, scale || 2).then((blob) => download(name, blob, "image/png"));
  }

  // Print a whole HTML document from a hidden frame (no pop-up to block); resolves once print() was called.
  function printHtml(html) {
    return new Promise((resolve) => {
      const frame = document.createElement("iframe");
      frame.setAttribute("aria-hidden", "true");
      frame.tabIndex = -1;
      frame.style.cssText = "position:fixed;right:0;bottom:0;width:0;height:0;border:0;visibility:hidden";
      frame.onload = () => {
        const win = frame.contentWindow;
        const done = () => setTimeout(() => frame.remove(), 1000);
        win.addEventListener("afterprint", done, { once: true });
        const fonts = win.document.fonts ? win.document.fonts.ready : Promise.resolve();
        fonts.then(() => {
          win.focus();
          win.print();
          resolve(frame);
        });
      };
      frame.srcdoc = html;
      document.body.appendChild(frame);
    });
  }

  window.__dragonExport = { download, svgToPng, downloadPng, printHtml };
})();
