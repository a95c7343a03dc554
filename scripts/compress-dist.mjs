// Writes a brotli (quality 11) and a gzip (level 9) copy beside each text and
// wasm file of a release build (dist/), so a server that serves precompressed
// files (`countersign serve` does) sends the smallest encoding without
// compressing on every request. Usage: node scripts/compress-dist.mjs [dist-dir]
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeCompressed } from "./dist-files.mjs";

const dist = process.argv[2] ?? "dist";
const COMPRESSIBLE = /\.(html|js|css|wasm|svg|json|webmanifest)$/;
for (const name of readdirSync(dist)) {
  const path = join(dist, name);
  if (COMPRESSIBLE.test(name) && statSync(path).isFile()) writeCompressed(path);
}
