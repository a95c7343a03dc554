// Which files of a release build (dist/) the browser fetches to show the inbox,
// and which it fetches only when a screen first needs them (the chunks cut by
// scripts/split-app.mjs). Shared by size-report.mjs and bench/run.mjs.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ON_DEMAND = /^(split_|chunk_).*\.wasm$/;
const FIRST_PAINT = /^first-paint-/;

/**
 * `{ firstLoad, firstPaint, onDemand }`: file names of dist's html, js, wasm
 * and css. The first paint's module (fetched before the app on a first visit,
 * or with a server connection saved) is apart from the first load.
 */
export function distFiles(dist) {
  const files = readdirSync(dist)
    .filter((f) => /\.(html|js|wasm|css)$/.test(f) && statSync(join(dist, f)).isFile())
    .sort();
  return {
    firstLoad: files.filter((f) => !ON_DEMAND.test(f) && !FIRST_PAINT.test(f)),
    firstPaint: files.filter((f) => FIRST_PAINT.test(f)),
    onDemand: files.filter((f) => ON_DEMAND.test(f)),
  };
}
