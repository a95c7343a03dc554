// Makes the release build run under a strict Content-Security-Policy: the one
// inline script, the boot script (scripts/first-paint.mjs), is allowed by its
// SHA-256 hash and no other inline script runs; index.html gets the policy as
// a meta tag, so any static host serves it. `countersign serve` sends the same
// policy as a header, with frame-ancestors (which a meta tag cannot carry).
// Usage: node scripts/harden-dist.mjs [dist-dir]
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appPolicy } from "./app-policy.mjs";

const dist = process.argv[2] ?? "dist";
const indexPath = join(dist, "index.html");
let html = readFileSync(indexPath, "utf8");

const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)];
if (inline.length !== 1) {
  throw new Error(`${indexPath}: expected the one inline boot script, found ${inline.length}`);
}
const boot = `'sha256-${createHash("sha256").update(inline[0][1]).digest("base64")}'`;

const POLICY = appPolicy([boot]);

// scripts/split-app.mjs replaced the wasm and its glue after trunk hashed them:
// every preload's integrity is taken again from the file as served.
html = html.replace(/<link\b[^>]*\bhref="\/([^"]+)"[^>]*>/g, (tag, file) => {
  if (!/\bintegrity="/.test(tag)) return tag;
  const digest = createHash("sha384").update(readFileSync(join(dist, file))).digest("base64");
  return tag.replace(/\bintegrity="[^"]*"/, `integrity="sha384-${digest}"`);
});

html = html.replace("<head>", `<head>\n    <meta http-equiv="Content-Security-Policy" content="${POLICY}" />`);
if (/\son[a-z]+=/i.test(html) || /\sstyle=/.test(html)) {
  throw new Error(`${indexPath}: inline handler or style left after hardening`);
}
writeFileSync(indexPath, html);
console.log(`${indexPath}: Content-Security-Policy added, the boot script allowed by its hash`);
