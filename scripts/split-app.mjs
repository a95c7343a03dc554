// Splits the release app into a first-load module and on-demand chunks.
// trunk builds the app with the `split` feature (its own wasm-bindgen output
// cannot run: it still imports the split placeholders); this script takes
// cargo's wasm (linked with --emit-relocs), cuts it at the split points of
// src/pages/on_demand.rs with wasm-split-cli, runs wasm-bindgen and wasm-opt on
// every part, minifies the JavaScript, and puts them in dist/ under trunk's file
// names. The loader and the chunks get content-hashed names, so a browser never
// mixes two builds. On a review's address, the boot script also preloads the
// review page's chunk while the app itself loads.
// Usage: node scripts/split-app.mjs <dist-dir> <cargo-wasm>
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashOf, minified, run, runAll, wasmOpt } from "./wasm-tools.mjs";

const [dist, cargoWasm] = process.argv.slice(2);
if (!dist || !cargoWasm) throw new Error("usage: node scripts/split-app.mjs <dist-dir> <cargo-wasm>");

const js = readdirSync(dist).filter((f) => /^countersign-app-[0-9a-f]+\.js$/.test(f));
if (js.length !== 1) throw new Error(`${dist}: expected trunk's one countersign-app-<hash>.js, found ${js.length}`);
const stem = js[0].slice(0, -".js".length);

const work = mkdtempSync(join(tmpdir(), "countersign-split-"));
try {
  const split = join(work, "split");
  run("wasm-split-cli", [cargoWasm, split, "--target", "web", "--out-name", stem]);
  const bindgen = join(work, "bindgen");
  // --keep-lld-exports: the chunks link against the main module's function table.
  run("wasm-bindgen", ["--target", "web", "--no-typescript", "--keep-lld-exports", "--out-dir", bindgen, "--out-name", stem, join(split, `${stem}.wasm`)]);
  let loader = readFileSync(join(split, "__wasm_split.js"), "utf8");
  const renamed = {};
  const chunks = readdirSync(split).filter((f) => f.endsWith(".wasm") && f !== `${stem}.wasm`);
  if (chunks.length === 0) throw new Error(`${cargoWasm}: no split points found (built without the split feature?)`);
  // The main module and every chunk through wasm-opt, on every core.
  await runAll([
    wasmOpt(join(bindgen, `${stem}_bg.wasm`), join(dist, `${stem}_bg.wasm`)),
    ...chunks.map((chunk) => wasmOpt(join(split, chunk), join(work, chunk))),
  ]);
  for (const chunk of chunks) {
    const bytes = readFileSync(join(work, chunk));
    const name = `${chunk.slice(0, -".wasm".length)}-${hashOf(bytes)}.wasm`;
    writeFileSync(join(dist, name), bytes);
    renamed[chunk] = name;
    if (!loader.includes(`"./${chunk}"`)) throw new Error(`__wasm_split.js does not load ${chunk}`);
    loader = loader.replaceAll(`"./${chunk}"`, `"./${name}"`);
  }
  // The review page's code: its chunk and the chunks it needs, as the loader lists them.
  const reviewAt = renamed["split_review.wasm"] ? loader.indexOf(`"./${renamed["split_review.wasm"]}"`) : -1;
  if (reviewAt < 0) throw new Error("no review page chunk (split_review.wasm)");
  const needed = loader.slice(reviewAt, loader.indexOf("]", reviewAt)).match(/__chunk_\d+/g) ?? [];
  const review = ["split_review.wasm", ...needed.map((name) => `${name.slice(2)}.wasm`)].map((chunk) => {
    if (!renamed[chunk]) throw new Error(`the review page needs ${chunk}, which was not split out`);
    return renamed[chunk];
  });
  const indexPath = join(dist, "index.html");
  const boot = '<script type="module">';
  const html = readFileSync(indexPath, "utf8");
  if (!html.includes(boot)) throw new Error(`${indexPath}: no inline boot script to extend`);
  // Fetched beside the app's own code when a review's address is opened (a link to
  // one request), or when a row of the first paint is tapped, instead of after the
  // app starts: the boot script (scripts/first-paint.mjs) calls it, after the
  // server's drawing of the review when it asks for one. Under the path the app is
  // served at (scripts/rebase-dist.mjs writes it in the page), once.
  const preload = `function preloadReview() {
  const base = document.querySelector('meta[name="countersign-base"]')?.content ?? "/";
  if (preloadReview.done) return;
  preloadReview.done = true;
  for (const file of ${JSON.stringify(review)}) {
    document.head.append(Object.assign(document.createElement("link"), { rel: "preload", as: "fetch", href: base + file, crossOrigin: "anonymous" }));
  }
}
`;
  let page = html.replace(boot, `${boot}\n${preload}`);

  loader = await minified(loader);
  const loaderName = `split-loader-${hashOf(loader)}.js`;
  writeFileSync(join(dist, loaderName), loader);
  // The glue imports the loader: without this, the browser finds it only after
  // the glue arrived, one round trip later, and the app starts that much later.
  const glueTag = page.match(/<link rel="modulepreload" href="\/countersign-app-[0-9a-f]+\.js"[^>]*>/)?.[0];
  if (!glueTag) throw new Error(`${indexPath}: no modulepreload of the app's glue`);
  // Its integrity, like the glue's (replaced below), is hashed from the file as
  // served by scripts/harden-dist.mjs, which runs next.
  page = page.replace(glueTag, `${glueTag}\n<link rel="modulepreload" href="/${loaderName}" crossorigin="anonymous" integrity="">`);
  writeFileSync(indexPath, page);

  const glue = readFileSync(join(bindgen, `${stem}.js`), "utf8");
  // Only the module import moves; the wasm's import namespace keeps its name.
  const importLine = 'from "./__wasm_split.js"';
  if (!glue.includes(importLine)) throw new Error(`${stem}.js does not import the split loader`);
  writeFileSync(join(dist, `${stem}.js`), await minified(glue.replaceAll(importLine, `from "./${loaderName}"`)));
  console.log(`${dist}: ${stem} split into the first load and ${chunks.length} on-demand chunks (${loaderName})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
