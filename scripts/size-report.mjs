// Prints the first-load size of the built app (dist/): raw, gzip -9 and brotli
// (quality 11) per file and in total. A measurement, not a test: it never fails
// on a budget. Usage: node scripts/size-report.mjs [dist-dir]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const dist = process.argv[2] ?? "dist";
const firstLoad = readdirSync(dist).filter((f) => /\.(html|js|wasm|css)$/.test(f) && statSync(join(dist, f)).isFile());
const kb = (n) => (n / 1024).toFixed(1).padStart(8);
let total = { raw: 0, gzip: 0, brotli: 0 };
console.log(`${"file".padEnd(44)} ${"raw KB".padStart(8)} ${"gzip KB".padStart(8)} ${"br KB".padStart(8)}`);
for (const file of firstLoad.sort()) {
  const bytes = readFileSync(join(dist, file));
  const sizes = {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
  for (const k of Object.keys(total)) total[k] += sizes[k];
  console.log(`${file.padEnd(44)} ${kb(sizes.raw)} ${kb(sizes.gzip)} ${kb(sizes.brotli)}`);
}
console.log(`${"first load (wasm + js + css + html)".padEnd(44)} ${kb(total.raw)} ${kb(total.gzip)} ${kb(total.brotli)}`);
