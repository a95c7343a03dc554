// Prints the size of the built app (dist/): raw, gzip -9 and brotli (quality 11)
// per file, the first load (what the inbox needs) in total, the first paint
// (the module that draws the inbox's first page before the app), then the chunks
// fetched when a screen first opens. A measurement, not a test: it never fails
// on a budget. Usage: node scripts/size-report.mjs [dist-dir]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { distFiles } from "./dist-files.mjs";

const dist = process.argv[2] ?? "dist";
const kb = (n) => (n / 1024).toFixed(1).padStart(8);

function report(files, totalLabel) {
  const total = { raw: 0, gzip: 0, brotli: 0 };
  for (const file of files) {
    const bytes = readFileSync(join(dist, file));
    const sizes = {
      raw: bytes.length,
      gzip: gzipSync(bytes, { level: 9 }).length,
      brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    };
    for (const k of Object.keys(total)) total[k] += sizes[k];
    console.log(`${file.padEnd(48)} ${kb(sizes.raw)} ${kb(sizes.gzip)} ${kb(sizes.brotli)}`);
  }
  console.log(`${totalLabel.padEnd(48)} ${kb(total.raw)} ${kb(total.gzip)} ${kb(total.brotli)}\n`);
}

const { firstLoad, firstPaint, onDemand } = distFiles(dist);
console.log(`${"file".padEnd(48)} ${"raw KB".padStart(8)} ${"gzip KB".padStart(8)} ${"br KB".padStart(8)}`);
report(firstLoad, "first load (wasm + js + css + html)");
if (firstPaint.length > 0) report(firstPaint, "first paint (drawn before the app)");
if (onDemand.length > 0) report(onDemand, "on demand (fetched when a screen first opens)");
