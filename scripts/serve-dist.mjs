// Serves a built app (dist/) on 127.0.0.1 as a static host would; prints the URL.
// Usage: node scripts/serve-dist.mjs [site-dir] [port] [--like spa|pages|netlify]
//   spa (the default): a path that is not a file gets index.html (an SPA fallback),
//     so deep links and reloads work.
//   pages: files only, as GitHub Pages serves them: a folder answers its index.html,
//     any other path the nearest 404.html above it with status 404.
//   netlify: files, then the site's _redirects applied by Netlify's own engine
//     (@netlify/redirects), else 404.
// A file with a brotli copy beside it (scripts/compress-dist.mjs) is sent as that
// copy to a browser that accepts brotli, as static hosts compress what they send.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, join, normalize, resolve } from "node:path";

const like = process.argv.includes("--like") ? process.argv[process.argv.indexOf("--like") + 1] : "spa";
const [siteArg, portArg] = process.argv.slice(2).filter((arg, i, all) => arg !== "--like" && all[i - 1] !== "--like");
if (!["spa", "pages", "netlify"].includes(like)) throw new Error(`--like ${like}: expected spa, pages or netlify`);
const root = resolve(siteArg ?? "dist");
const port = Number(portArg ?? process.env.PORT ?? 8080);
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

/** The file a URL path names in the site (a folder's index.html), or null. */
async function fileAt(urlPath) {
  const safe = normalize(decodeURIComponent(urlPath)).replace(/^(\.\.[/\\])+/, "");
  for (const candidate of [join(root, safe), join(root, safe, "index.html")]) {
    if (!candidate.startsWith(root)) return null;
    const info = await stat(candidate).catch(() => null);
    if (info?.isFile()) return [candidate, info];
  }
  return null;
}

/** The nearest 404.html at or above the folder of `urlPath`. */
async function notFoundPage(urlPath) {
  for (let dir = dirname(`${urlPath}x`); ; dir = dirname(dir)) {
    const found = await fileAt(join(dir, "404.html"));
    if (found || dir === "/") return found;
  }
}

async function bodyOf(path, info) {
  const version = `${info.size}:${info.mtimeMs}`;
  const cached = cache.get(path);
  if (cached?.version === version) return cached.body;
  const body = await readFile(path);
  cache.set(path, { version, body });
  return body;
}

async function fileResponse([path, info], status = 200) {
  const hashed = /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/.test(path);
  return new Response(await bodyOf(path, info), {
    status,
    headers: {
      "x-file": path,
      "content-type": types[extname(path)] ?? "application/octet-stream",
      "cache-control": hashed ? "public, max-age=31536000, immutable" : "no-cache",
    },
  });
}

const notFound = () => new Response("not found", { status: 404, headers: { "content-type": "text/plain" } });

const hosts = {
  async spa(request) {
    const found = await fileAt(new URL(request.url).pathname);
    return fileResponse(found ?? (await fileAt("/index.html")));
  },
  async pages(request) {
    const path = new URL(request.url).pathname;
    const found = await fileAt(path);
    if (found) return fileResponse(found);
    const page = await notFoundPage(path);
    return page ? fileResponse(page, 404) : notFound();
  },
  async netlify(request) {
    const { RedirectsHandler } = await import("@netlify/redirects");
    const redirects = (hosts.redirects ??= new RedirectsHandler({
      configRedirects: [], jwtRoleClaim: "", jwtSecret: "", projectDir: root, publicDir: root,
    }));
    const staticFile = async (r) => {
      const found = await fileAt(new URL(r.url).pathname);
      return found && (() => fileResponse(found));
    };
    const match = await redirects.match(request);
    const answer = match && (await redirects.handle(request, match, staticFile));
    if (answer) return answer;
    const found = await fileAt(new URL(request.url).pathname);
    return found ? fileResponse(found) : notFound();
  },
};

createServer(async (incoming, outgoing) => {
  try {
    const request = new Request(new URL(incoming.url, `http://${incoming.headers.host ?? "localhost"}`), { method: incoming.method });
    const answer = await hosts[like](request);
    const headers = Object.fromEntries(answer.headers);
    const file = headers["x-file"];
    delete headers["x-file"];
    let body = Buffer.from(await answer.arrayBuffer());
    const brotli = file && /\bbr\b/.test(incoming.headers["accept-encoding"] ?? "") && (await stat(`${file}.br`).catch(() => null))?.isFile();
    if (brotli) {
      body = await bodyOf(`${file}.br`, await stat(`${file}.br`));
      Object.assign(headers, { "content-encoding": "br", vary: "accept-encoding" });
    }
    outgoing.writeHead(answer.status, headers);
    outgoing.end(incoming.method === "HEAD" ? undefined : body);
  } catch (error) {
    outgoing.writeHead(500, { "content-type": "text/plain" });
    outgoing.end(`cannot serve ${incoming.url}: ${error.message}`);
  }
}).listen(port, "127.0.0.1", () => {
  console.log(`Countersign is running at http://127.0.0.1:${port}/`);
});
