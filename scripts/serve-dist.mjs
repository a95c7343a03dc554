// Serves the built app (dist/) on 127.0.0.1 with an SPA fallback: any path that is
// not a file gets index.html, so deep links and reloads work. Prints the URL.
// Usage: node scripts/serve-dist.mjs [dist-dir] [port]
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, resolve } from "node:path";

const root = resolve(process.argv[2] ?? "dist");
const port = Number(process.argv[3] ?? process.env.PORT ?? 8080);
const types = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".png": "image/png",
};

// Bodies are kept in memory, checked against the file's size and time on each
// request (a rebuild is served at once), as a static host serves from its cache.
const cache = new Map();

async function fileFor(urlPath) {
  const safe = normalize(decodeURIComponent(urlPath)).replace(/^(\.\.[/\\])+/, "");
  const candidate = join(root, safe);
  if (candidate.startsWith(root)) {
    const info = await stat(candidate).catch(() => null);
    if (info?.isFile()) return [candidate, info];
  }
  const index = join(root, "index.html");
  return [index, await stat(index)];
}

async function bodyOf(path, info) {
  const version = `${info.size}:${info.mtimeMs}`;
  const cached = cache.get(path);
  if (cached?.version === version) return cached.body;
  const body = await readFile(path);
  cache.set(path, { version, body });
  return body;
}

createServer(async (request, response) => {
  try {
    const [path, info] = await fileFor(new URL(request.url, "http://localhost").pathname);
    const body = await bodyOf(path, info);
    const hashed = /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/.test(path);
    response.writeHead(200, {
      "content-type": types[extname(path)] ?? "application/octet-stream",
      "cache-control": hashed ? "public, max-age=31536000, immutable" : "no-cache",
    });
    response.end(body);
  } catch (error) {
    response.writeHead(500, { "content-type": "text/plain" });
    response.end(`cannot serve ${request.url}: ${error.message}`);
  }
}).listen(port, "127.0.0.1", () => {
  console.log(`Countersign is running at http://127.0.0.1:${port}/`);
});
