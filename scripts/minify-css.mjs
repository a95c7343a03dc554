// Minifies the stylesheets trunk copied into a release build (dist/) with
// Lightning CSS: the comments and layout are for style/, not for every
// reviewer's first load. Same rules, same order; no browser targets, so no
// syntax is rewritten for older browsers. A file keeps trunk's content-hashed
// name (the source's hash: the same source always minifies the same way).
// Runs before harden-dist.mjs, which takes each file's integrity as served.
// Usage: node scripts/minify-css.mjs [dist-dir]
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { transform } from "lightningcss";

const dist = process.argv[2] ?? "dist";
const sheets = readdirSync(dist).filter((name) => name.endsWith(".css"));
if (sheets.length === 0) throw new Error(`${dist}: no stylesheet to minify`);
for (const name of sheets) {
  const path = join(dist, name);
  const source = readFileSync(path);
  const { code, warnings } = transform({ filename: name, code: source, minify: true });
  for (const w of warnings) console.warn(`${path}:${w.loc.line}:${w.loc.column}: ${w.message}`);
  writeFileSync(path, code);
  console.log(`${path}: minified, ${(source.length / 1024).toFixed(1)} KB -> ${(code.length / 1024).toFixed(1)} KB`);
}
