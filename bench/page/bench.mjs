// Runs in one page: the domain crate in wasm (bench/wasm) beside its
// JavaScript peers, on the same inputs, in the same browser session.
// bench/run.mjs calls window.bench.* and prints the figures.
import init, { layout, canonical_hash } from "./pkg/countersign_bench.js";
import canonicalize from "./canonicalize.js";

await init();

/** xorshift, so every run measures the same graphs. */
function rng(seed) {
  let s = BigInt(seed);
  const mask = (1n << 64n) - 1n;
  return (n) => {
    s ^= (s << 13n) & mask;
    s ^= s >> 7n;
    s ^= (s << 17n) & mask;
    return Number(s % BigInt(n));
  };
}

/** The criterion bench's plan shape (crates/domain/benches/plan.rs): phases of
 * 40 steps, each a chain, a fan-out/fan-in around a hub, or sparse random
 * dependencies on the 25 steps before; each phase waits for the last one. */
function plan(n) {
  const PHASE = 40;
  const below = rng(0x9e3779b97f4a7c15n);
  const from = [], to = [];
  for (let i = 1; i < n; i++) {
    const start = i - (i % PHASE);
    const deps = new Set();
    if (i === start) deps.add(i - 1);
    else if (Math.floor(i / PHASE) % 3 === 0) deps.add(i - 1);
    else if (Math.floor(i / PHASE) % 3 === 1) {
      if (i % PHASE === PHASE - 1) for (let d = i - 8; d < i; d++) deps.add(d);
      else deps.add(start);
    } else {
      const count = below(3) + 1;
      for (let k = 0; k < count; k++) deps.add(i - 1 - below(Math.min(i - start, 25)));
    }
    for (const d of [...deps].sort((a, b) => a - b)) {
      from.push(d);
      to.push(i);
    }
  }
  return { n, from: Uint32Array.from(from), to: Uint32Array.from(to) };
}

/** Proper crossings among straight segments [x1, y1, x2, y2] (touching at an
 * end does not count): one metric for both layouts. A sweep over y keeps only
 * the segments whose vertical spans overlap. */
function crossings(segments) {
  const items = segments.map(([x1, y1, x2, y2]) => (y1 <= y2 ? [x1, y1, x2, y2] : [x2, y2, x1, y1]));
  items.sort((a, b) => a[1] - b[1]);
  const orient = (ax, ay, bx, by, cx, cy) => Math.sign((bx - ax) * (cy - ay) - (by - ay) * (cx - ax));
  const near = (a, b) => Math.abs(a - b) < 1e-6;
  let count = 0;
  let active = [];
  for (const s of items) {
    active = active.filter((t) => t[3] > s[1] + 1e-6);
    for (const t of active) {
      const shared = (near(s[0], t[0]) && near(s[1], t[1])) || (near(s[0], t[2]) && near(s[1], t[3])) ||
        (near(s[2], t[0]) && near(s[3], t[1])) || (near(s[2], t[2]) && near(s[3], t[3]));
      if (shared) continue;
      const d1 = orient(s[0], s[1], s[2], s[3], t[0], t[1]), d2 = orient(s[0], s[1], s[2], s[3], t[2], t[3]);
      const d3 = orient(t[0], t[1], t[2], t[3], s[0], s[1]), d4 = orient(t[0], t[1], t[2], t[3], s[2], s[3]);
      if (d1 * d2 < 0 && d3 * d4 < 0) count++;
    }
    active.push(s);
  }
  return count;
}

/** Our layout, timed as the mean of `reps` runs (see `bench.layout`). */
function ours(g, reps = 1) {
  let out;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) out = layout(g.n, g.from, g.to);
  const ms = (performance.now() - t0) / reps;
  const segments = [];
  for (let i = 2; i < out.length; i += 4) segments.push([out[i], out[i + 1], out[i + 2], out[i + 3]]);
  return { ms, segments, layers: out[0] };
}

function dagres(g) {
  const t0 = performance.now();
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 56 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (let i = 0; i < g.n; i++) graph.setNode(String(i), { width: 220, height: 76 });
  for (let k = 0; k < g.from.length; k++) graph.setEdge(String(g.from[k]), String(g.to[k]));
  dagre.layout(graph);
  const ms = performance.now() - t0;
  const segments = [];
  for (const e of graph.edges()) {
    const points = graph.edge(e).points;
    for (let k = 1; k < points.length; k++) segments.push([points[k - 1].x, points[k - 1].y, points[k].x, points[k].y]);
  }
  return { ms, segments };
}

/** Draws the edges of a layout as SVG paths into the page; the time to a painted frame. */
async function draw(segments) {
  const holder = document.getElementById("drawing");
  holder.textContent = "";
  const t0 = performance.now();
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  let d = "";
  for (const [x1, y1, x2, y2] of segments) d += `M${x1} ${y1}L${x2} ${y2}`;
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", d);
  path.setAttribute("stroke", "black");
  svg.append(path);
  holder.append(svg);
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

window.bench = {
  /** Layout of an n-step plan by both, `runs` times each, alternating. */
  async layout(n, runs) {
    const g = plan(n);
    // Small plans repeat within a sample so the browser's coarse clock (0.1 ms)
    // does not decide the figure (a 10-step layout takes a few microseconds).
    const reps = Math.max(1, Math.round(2000 / n));
    const mine = [], theirs = [];
    // One untimed run of each first: the engines compile on first use.
    let a = ours(g), b = dagres(g);
    for (let r = 0; r < runs; r++) {
      a = ours(g, reps);
      mine.push(a.ms);
      b = dagres(g);
      theirs.push(b.ms);
    }
    return {
      n, edges: g.from.length, runs, layers: a.layers,
      ours: mine, dagre: theirs,
      oursCrossings: crossings(a.segments), dagreCrossings: crossings(b.segments),
      oursDraw: await draw(a.segments), dagreDraw: await draw(b.segments),
    };
  },

  /** Canonical JSON + SHA-256 of a tool call of about `bytes`, both ways, from its text. */
  async canonical(bytes, runs) {
    const args = {};
    for (let i = 0; JSON.stringify(args).length < bytes; i++) {
      args[`field_${i}`] = i % 3 === 0 ? { n: i * 7, ok: i % 2 === 0, note: `value ${i} `.padEnd(40, "x") } : `value ${i} `.padEnd(90, "x");
    }
    const text = JSON.stringify({ name: "bulk_update", args });
    const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const js = async () => hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalize(JSON.parse(text)))));
    const wasm = [], javascript = [];
    let same = canonical_hash(text) === (await js()); // untimed warm-up of both
    // Small calls repeat within a sample so the browser's coarse clock (0.1 ms)
    // does not decide the figure; each sample is the mean time of one call.
    const reps = Math.max(1, Math.round(200_000 / text.length));
    for (let r = 0; r < runs; r++) {
      let a, b;
      let t0 = performance.now();
      for (let i = 0; i < reps; i++) a = canonical_hash(text);
      wasm.push((performance.now() - t0) / reps);
      t0 = performance.now();
      for (let i = 0; i < reps; i++) b = await js();
      javascript.push((performance.now() - t0) / reps);
      same &&= a === b;
    }
    return { bytes: text.length, runs, wasm, javascript, same };
  },
  median,
};
document.getElementById("state").textContent = "ready";
