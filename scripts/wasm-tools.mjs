// What the build scripts share: wasm-opt as they run it, running tools, content
// hashes for file names, and JavaScript minification.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { minify } from "terser";

// The features rustc 1.88+ emits for wasm32 by default; wasm-opt must accept them.
// A function with one caller is inlined only when small: V8 optimizes a hot wasm
// function whole, on another core, while the page loads, and a loop inlined into
// a large caller (the inbox index's parse into `main`, 20 KB) made it optimize the
// caller for about 60 ms on this 2-core machine during the first frame.
const WASM_OPT = [
  "-Oz", "--one-caller-inline-max-function-size=200", "--strip-debug", "--strip-producers",
  "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
  "--enable-mutable-globals", "--enable-reference-types", "--enable-multivalue",
];
// npm's binaryen is binaryen compiled to wasm, run by node. Each run is a new
// process, in which V8's optimizing tier compiled binaryen's 10 MB again for
// every chunk; its baseline compiler alone gives the same output for far less
// CPU (the README's testing section has the figures).
const binaryenWasmOpt = fileURLToPath(new URL("../node_modules/binaryen/bin/wasm-opt", import.meta.url));
/** The `[cmd, args]` that optimizes `input` into `output` for size. */
export const wasmOpt = (input, output) => ["node", ["--liftoff-only", binaryenWasmOpt, ...WASM_OPT, input, "-o", output]];
/** Runs a tool, its output shown, failing the build when it fails. */
export const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"] });
/**
 * Runs every `[cmd, args]` job, as many at once as there are cores; their
 * output is shown only when one fails, which fails the build.
 */
export async function runAll(jobs) {
  const queue = [...jobs];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      const [cmd, args] = job;
      await new Promise((resolve, reject) =>
        execFile(cmd, args, { maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) =>
          error ? reject(new Error(`${cmd} ${args.join(" ")} failed:\n${stdout}${stderr}`)) : resolve()));
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), queue.length) }, worker));
}
/** 16 hex digits of the SHA-256 of `bytes`, for content-hashed file names. */
export const hashOf = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 16);
/** Subresource Integrity of `bytes` (as harden-dist.mjs writes it). */
export const integrityOf = (bytes) => `sha384-${createHash("sha384").update(bytes).digest("base64")}`;
/**
 * Minified code: export names and the wasm's import names (strings) are kept;
 * locals shrink. `module: false` for a classic script (its top-level names are
 * global and kept).
 */
export const minified = async (code, { module = true } = {}) => (await minify(code, { module, compress: true, mangle: true })).code;
