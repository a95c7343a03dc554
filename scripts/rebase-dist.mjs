// Sets the path a release build (dist/) is served under, so a static host can
// serve it anywhere: "/" (the default) or a sub-path such as "/countersign/"
// for https://example.github.io/countersign/. Only the page names the path:
// its links to the stylesheet, icons and manifest, and a
// <meta name="countersign-base"> that the boot script and the app read for
// everything else (the app's own files, its links and its address bar). The
// page is also written as 404.html, which hosts without an SPA fallback
// (GitHub Pages and others) answer a deep link or a reload with.
// Usage: node scripts/rebase-dist.mjs <dist-dir> <base> [out-dir]
// With out-dir, the build is copied there and dist/ is left as it was.
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeCompressed } from "./dist-files.mjs";

const [dist, base, out] = process.argv.slice(2);
if (!dist || !base) throw new Error("usage: node scripts/rebase-dist.mjs <dist-dir> <base> [out-dir]");
// Plain path segments only: the base is written into the page's attributes unescaped.
if (!/^\/([A-Za-z0-9._~-]+\/)*$/.test(base)) {
  throw new Error(`base path ${JSON.stringify(base)}: expected "/" or segments between slashes such as "/countersign/" (letters, digits, . _ ~ -)`);
}
const target = out ?? dist;
if (out) cpSync(dist, out, { recursive: true });

const indexPath = join(target, "index.html");
let html = readFileSync(indexPath, "utf8");
const META = /<meta name="countersign-base" content="([^"]*)" \/>\n?/;
const old = html.match(META)?.[1] ?? "/";
html = html.replace(META, "");
// Every link and script tag of the page names a file of the build, under the old base.
html = html.replace(/<(link|script)\b[^>]*>/g, (tag) => tag.replace(/\b(href|src)="([^"]*)"/, (attribute, name, url) => {
  if (!url.startsWith(old)) throw new Error(`${indexPath}: ${name}="${url}" is not under the build's base ${old}`);
  return `${name}="${base}${url.slice(old.length)}"`;
}));
// Before the boot script, which reads it as the page is parsed.
html = html.replace("<head>", `<head>\n    <meta name="countersign-base" content="${base}" />`);
for (const page of ["index.html", "404.html"]) {
  const path = join(target, page);
  writeFileSync(path, html);
  if (existsSync(join(target, "index.html.br"))) writeCompressed(path);
}
console.log(`${target}: served under ${base}${out ? ` (copied from ${dist})` : ""}; 404.html answers deep links`);
