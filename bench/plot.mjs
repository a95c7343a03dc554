// The layout plot of BENCHMARKS.md: median layout time against plan size,
// ours and dagre's, on log-log axes, as a self-contained SVG.

/** SVG text for points [{n, ours, dagre}] (milliseconds). */
export function layoutPlot(plot) {
  const width = 680, height = 380, pad = 64, left = 96;
  const xs = plot.map((p) => Math.log10(p.n)), ys = plot.flatMap((p) => [Math.log10(p.ours), Math.log10(p.dagre)]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.floor(Math.min(...ys)), Math.ceil(Math.max(...ys))];
  const X = (n) => left + ((Math.log10(n) - x0) / (x1 - x0)) * (width - left - pad);
  const Y = (ms) => height - pad - ((Math.log10(ms) - y0) / (y1 - y0)) * (height - 2 * pad);
  const line = (key, color) => `<polyline fill="none" stroke="${color}" stroke-width="2.5" points="${plot.map((p) => `${X(p.n).toFixed(1)},${Y(p[key]).toFixed(1)}`).join(" ")}"/>` + plot.map((p) => `<circle cx="${X(p.n).toFixed(1)}" cy="${Y(p[key]).toFixed(1)}" r="4" fill="${color}"/>`).join("");
  const ticksY = Array.from({ length: y1 - y0 + 1 }, (_, i) => 10 ** (y0 + i)).map((v) => `<line x1="${left}" x2="${width - pad}" y1="${Y(v)}" y2="${Y(v)}" stroke="#ddd"/><text x="${left - 8}" y="${Y(v) + 4}" text-anchor="end">${v >= 1 ? v : v.toFixed(Math.round(-Math.log10(v)))} ms</text>`).join("");
  const ticksX = plot.map((p) => `<text x="${X(p.n)}" y="${height - pad + 20}" text-anchor="middle">${p.n}</text>`).join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="${width / 2}" y="24" text-anchor="middle" font-size="15">Plan layout time against plan size (log–log, median)</text>${ticksY}${ticksX}<text x="${width / 2}" y="${height - 12}" text-anchor="middle">steps</text>${line("dagre", "#c0392b")}${line("ours", "#1f5fbf")}<text x="${left + 12}" y="${pad - 8}" fill="#c0392b">dagre (JavaScript)</text><text x="${left + 12}" y="${pad + 10}" fill="#1f5fbf">Countersign (wasm)</text></svg>\n`;
}
