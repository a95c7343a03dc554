// Makes the release build run under a strict Content-Security-Policy:
// trunk's inline boot script moves into its own content-hashed file (loaded
// with Subresource Integrity), and index.html gets the policy as a meta tag,
// so any static host serves it. `countersign serve` sends the same policy as
// a header, with frame-ancestors (which a meta tag cannot carry).
// Usage: node scripts/harden-dist.mjs [dist-dir]
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dist = process.argv[2] ?? "dist";
const indexPath = join(dist, "index.html");
let html = readFileSync(indexPath, "utf8");

// No inline script, no eval; wasm compiles ('wasm-unsafe-eval'); styles only
// from our stylesheet; the reviewer may point the app at any backend or
// LangGraph server, so fetches may go to https origins and to this machine.
const POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' https: http://127.0.0.1:* http://localhost:*",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "manifest-src 'self'",
].join("; ");

// scripts/split-app.mjs replaced the wasm and its glue after trunk hashed them:
// every preload's integrity is taken again from the file as served.
html = html.replace(/<link\b[^>]*\bhref="\/([^"]+)"[^>]*>/g, (tag, file) => {
  if (!/\bintegrity="/.test(tag)) return tag;
  const digest = createHash("sha384").update(readFileSync(join(dist, file))).digest("base64");
  return tag.replace(/\bintegrity="[^"]*"/, `integrity="sha384-${digest}"`);
});

const inline = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)];
if (inline.length !== 1) {
  throw new Error(`${indexPath}: expected trunk's one inline boot script, found ${inline.length}`);
}
const [tag, code] = inline[0];
const name = `boot-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.js`;
writeFileSync(join(dist, name), code);
const integrity = `sha384-${createHash("sha384").update(code).digest("base64")}`;
html = html.replace(tag, `<script type="module" src="/${name}" integrity="${integrity}" crossorigin="anonymous"></script>`);
html = html.replace("<head>", `<head>\n    <meta http-equiv="Content-Security-Policy" content="${POLICY}" />`);
if (/<script(?![^>]*\bsrc=)[^>]*>/.test(html) || /\son[a-z]+=/i.test(html) || /\sstyle=/.test(html)) {
  throw new Error(`${indexPath}: inline script, handler or style left after hardening`);
}
writeFileSync(indexPath, html);
console.log(`${indexPath}: boot script in ${name}, Content-Security-Policy added`);
