// Assembles the app for scripts/run.sh from cargo's wasm, without trunk: runs
// wasm-bindgen, names each file by its content (as trunk does, so the server
// caches them the same way), copies public/ and the stylesheet, and writes
// index.html from the source page with a boot module and the same
// Content-Security-Policy as the release build (app-policy.mjs). One wasm, no
// chunks, no first paint: the release build (build-app.sh) adds those.
// Usage: node scripts/assemble-app.mjs <app.wasm> <out-dir>
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appPolicy } from "./app-policy.mjs";

const [wasm, out] = process.argv.slice(2);
if (!wasm || !out) throw new Error("usage: node scripts/assemble-app.mjs <app.wasm> <out-dir>");

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
execFileSync("wasm-bindgen", ["--target", "web", "--no-typescript", "--remove-name-section", "--remove-producers-section", "--out-dir", out, "--out-name", "countersign-app", wasm], {
  stdio: "inherit",
});

/** Renames `name` in `out` to `stem-<16 hex of its content><ext>`; returns the new name. */
const hashed = (name, stem, ext) => {
  const digest = createHash("sha256").update(readFileSync(join(out, name))).digest("hex").slice(0, 16);
  const named = `${stem}-${digest}${ext}`;
  renameSync(join(out, name), join(out, named));
  return named;
};
const wasmFile = hashed("countersign-app_bg.wasm", "countersign-app", "_bg.wasm");
// The glue names no wasm file of its own: the boot module passes it.
const glue = hashed("countersign-app.js", "countersign-app", ".js");
cpSync("style/main.css", join(out, "main.css"));
const css = hashed("main.css", "main", ".css");
writeFileSync(
  join(out, "boot.js"),
  `import init from "./${glue}";\nawait init({ module_or_path: new URL("./${wasmFile}", import.meta.url) });\n`,
);
const boot = hashed("boot.js", "boot", ".js");
cpSync("public", out, { recursive: true });

let html = readFileSync("index.html", "utf8");
const trunkLinks = /\s*<link data-trunk\b[^>]*>/g;
if ((html.match(trunkLinks) ?? []).length !== 3) throw new Error("index.html: expected trunk's three links (rust, css, copy-dir)");
html = html.replace(trunkLinks, "");
html = html.replace(
  "</head>",
  [
    `    <link rel="stylesheet" href="/${css}" />`,
    `    <link rel="modulepreload" href="/${glue}" />`,
    `    <link rel="preload" href="/${wasmFile}" as="fetch" type="application/wasm" crossorigin="anonymous" />`,
    `    <script type="module" src="/${boot}"></script>`,
    "  </head>",
  ].join("\n"),
);
html = html.replace("<head>", `<head>\n    <meta http-equiv="Content-Security-Policy" content="${appPolicy([])}" />`);
writeFileSync(join(out, "index.html"), html);
console.log(`${out}: the app assembled (${wasmFile}, ${glue}, ${css})`);
