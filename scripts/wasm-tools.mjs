// What the build scripts share: wasm-opt's flags, running a tool, content
// hashes for file names, and JavaScript minification.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { minify } from "terser";

// The features rustc 1.88+ emits for wasm32 by default; wasm-opt must accept them.
// A function with one caller is inlined only when small: V8 optimizes a hot wasm
// function whole, on another core, while the page loads, and a loop inlined into
// a large caller (the inbox index's parse into `main`, 20 KB) made it optimize the
// caller for about 60 ms on this 2-core machine during the first frame.
export const WASM_OPT = [
  "-Oz", "--one-caller-inline-max-function-size=200", "--strip-debug", "--strip-producers",
  "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
  "--enable-mutable-globals", "--enable-reference-types", "--enable-multivalue",
];
/** Runs a tool, its output shown, failing the build when it fails. */
export const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"] });
/** 16 hex digits of the SHA-256 of `bytes`, for content-hashed file names. */
export const hashOf = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);
/** Subresource Integrity of `bytes` (as harden-dist.mjs writes it). */
export const integrityOf = (bytes) => `sha384-${createHash("sha384").update(bytes).digest("base64")}`;
/** Minified module code: export names and the wasm's import names (strings) are kept; locals shrink. */
export const minified = async (code) => (await minify(code, { module: true, compress: true, mangle: true })).code;
