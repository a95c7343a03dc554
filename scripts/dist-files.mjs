// Which files of a release build (dist/) the browser fetches to show the inbox,
// and which it fetches only when a screen first needs them (the chunks cut by
// scripts/split-app.mjs). Shared by size-report.mjs and bench/run.mjs; and
// how a file's precompressed copies are written (compress-dist.mjs,
// rebase-dist.mjs).
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const ON_DEMAND = /^(split_|chunk_).*\.wasm$/;
const FIRST_PAINT = /^first-paint-/;

/**
 * `{ firstLoad, firstPaint, onDemand }`: file names of dist's html, js, wasm
 * and css. The first paint's module (fetched before the app on a first visit,
 * or with a server connection saved) is apart from the first load.
 */
export function distFiles(dist) {
  const files = readdirSync(dist)
    // 404.html is index.html again, for hosts that answer a deep link with it.
    .filter((f) => /\.(html|js|wasm|css)$/.test(f) && f !== "404.html" && statSync(join(dist, f)).isFile())
    .sort();
  return {
    firstLoad: files.filter((f) => !ON_DEMAND.test(f) && !FIRST_PAINT.test(f)),
    firstPaint: files.filter((f) => FIRST_PAINT.test(f)),
    onDemand: files.filter((f) => ON_DEMAND.test(f)),
  };
}

/** Writes a brotli (quality 11) and a gzip (level 9) copy beside `path`. */
export function writeCompressed(path) {
  const bytes = readFileSync(path);
  writeFileSync(`${path}.br`, brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
  }));
  writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
}
