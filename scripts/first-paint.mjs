// Adds the first paint (crates/first-paint) to the release build and makes the
// boot script choose. On a visit to the inbox it draws the inbox's first page
// before the app: on a first visit (no demo stored yet, no connection saved)
// the demo's rows, written by the first paint's small module; on a return to
// the local inbox, the head the app stored beside its index (the default page
// as it last showed it), written by the same module; with a
// Countersign server connection saved, the server's first page of pending
// reviews, written by the server itself when it serves this page (`GET
// /api/v1/inbox`: nothing to fetch but the page) or else by the module from
// the server's answer. The drawing's links open their screen: the address
// changes at once and the app opens it when it starts. The app is fetched once
// the rows are drawn (or half a second later if the server is slow); on any
// other visit at once. A server that knows the reviewer (signed in, or a key
// remembered on the device: its page-key cookie) writes its first page into
// the page itself; the boot script makes its links work the same way. The app's preloads move from index.html into the boot
// script for that reason (a preload in the page is fetched on every visit).
// Runs after split-app.mjs (the app's files are final) and before
// harden-dist.mjs (which allows the boot script by its hash).
// Usage: node scripts/first-paint.mjs <dist-dir> <cargo-wasm of countersign-first-paint>
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashOf, integrityOf, minified, run, wasmOpt } from "./wasm-tools.mjs";

const [dist, cargoWasm] = process.argv.slice(2);
if (!dist || !cargoWasm) throw new Error("usage: node scripts/first-paint.mjs <dist-dir> <cargo-wasm>");

const work = mkdtempSync(join(tmpdir(), "countersign-first-paint-"));
let paint;
try {
  run("wasm-bindgen", ["--target", "web", "--no-typescript", "--out-dir", work, "--out-name", "first-paint", cargoWasm]);
  const optimized = join(work, "optimized.wasm");
  run(...wasmOpt(join(work, "first-paint_bg.wasm"), optimized));
  const wasm = readFileSync(optimized);
  const glue = await minified(readFileSync(join(work, "first-paint.js"), "utf8"));
  paint = { glue: `first-paint-${hashOf(glue)}.js`, wasm: `first-paint-${hashOf(wasm)}_bg.wasm` };
  writeFileSync(join(dist, paint.glue), glue);
  writeFileSync(join(dist, paint.wasm), wasm);
} finally {
  rmSync(work, { recursive: true, force: true });
}

const indexPath = join(dist, "index.html");
let html = readFileSync(indexPath, "utf8");
// The app's preloads (its glue, the split loader, its wasm) leave the page.
const preloads = [...html.matchAll(/<link rel="(modulepreload|preload)" href="\/([^"]+)"[^>]*>\n?/g)];
const hrefs = preloads.map(([, , href]) => href);
const [appGlue, loader, appWasm] = [/^countersign-app-[0-9a-f]+\.js$/, /^split-loader-[0-9a-f]+\.js$/, /^countersign-app-[0-9a-f]+_bg\.wasm$/]
  .map((pattern) => hrefs.find((href) => pattern.test(href)));
if (!appGlue || !loader || !appWasm || preloads.length !== 3) {
  throw new Error(`${indexPath}: expected the preloads of the app's glue, loader and wasm, found ${hrefs.join(", ") || "none"}`);
}
for (const [tag] of preloads) html = html.replace(tag, "");

const start = `import init, * as bindings from '/${appGlue}';\nconst wasm = await init({ module_or_path: '/${appWasm}' });`;
if (!html.includes(start)) throw new Error(`${indexPath}: the boot script does not start the app as trunk writes it`);
// Each file by name: the boot script puts it under the path the app is served at.
const file = (name) => ({ href: name, integrity: integrityOf(readFileSync(join(dist, name))) });
const app = { glue: file(appGlue), loader: file(loader), wasm: file(appWasm) };
const firstPaint = { glue: file(paint.glue), wasm: file(paint.wasm) };
// This build's name, from what a drawing the app stores depends on (the app's code, which writes it, and the
// stylesheet): the app reads it from the page's meta, and stores its drawing for this build only.
const stylesheet = html.match(/<link rel="stylesheet" href="\/([^"]+\.css)"/)?.[1];
if (!stylesheet) throw new Error(`${indexPath}: expected the app's stylesheet link`);
const build = hashOf(`${app.wasm.integrity} ${file(stylesheet).integrity}`);
const boot = `// The path the app is served under: "/" unless scripts/rebase-dist.mjs moved it (say to "/countersign/").
const base = document.querySelector('meta[name="countersign-base"]')?.content ?? "/";
// This build's name (its countersign-build meta): the app stores its drawing of the inbox for this build only.
const build = ${JSON.stringify(build)};
const app = ${JSON.stringify(app)};
const firstPaint = ${JSON.stringify(firstPaint)};
for (const file of [...Object.values(app), ...Object.values(firstPaint)]) file.href = base + file.href;
// This script runs while the page is parsed (inline, before the stylesheet), so what it needs is asked
// for at once; whatever touches the body waits until the body is there.
const parsed = new Promise((resolve) =>
  document.readyState === "loading" ? document.addEventListener("DOMContentLoaded", resolve, { once: true }) : resolve());
// A drawing waits for the stylesheet too: put in the page before it, the rows would be laid out unstyled (all of them,
// content-visibility unknown yet) before the stylesheet could be read, then again with it. (The selector's value is
// unquoted: a page a server draws has its stylesheet inline, and no rel="stylesheet" anywhere.)
const styled = parsed.then(() => new Promise((resolve) => {
  const link = document.querySelector("link[rel=stylesheet]");
  if (!link || link.sheet) return resolve();
  link.addEventListener("load", resolve, { once: true });
  link.addEventListener("error", resolve, { once: true });
}));
// Fetched now, imported below: a module's own imports and its wasm need not wait for each other.
const preload = (...files) => files.forEach((file) => document.head.append(Object.assign(document.createElement("link"), file,
  file.href.endsWith(".wasm") ? { rel: "preload", as: "fetch", type: "application/wasm" } : { rel: "modulepreload" }, { crossOrigin: "anonymous" })));
// What to draw before the app: the demo's inbox on a first visit to a static host, the local inbox's stored head on a
// return to it, a Countersign server's first page when a connection to one is saved (read as the app reads it: this
// tab's first, then the remembered one); else nothing.
// The connection the app will use (this tab's first, then the remembered one): a Countersign server's URL and key,
// whether it is this page's own origin; "other" for another backend; null when none is saved.
const connection = (() => {
  try {
    for (const storage of [sessionStorage, localStorage]) {
      let saved;
      try {
        saved = JSON.parse(storage.getItem("countersign.v1.connection"));
      } catch {
        continue;
      }
      if (typeof saved?.url !== "string" || typeof saved.key !== "string") continue;
      if ((saved.backend ?? "countersign") !== "countersign") return "other";
      const server = saved.url.replace(/\\/+$/, "");
      return { server, key: saved.key, own: new URL(server, location.href).origin === location.origin };
    }
  } catch {}
  return null;
})();
const signedIn = document.cookie.split("; ").includes("countersign_signed_in=1");
// Who may have a review drawn by the server that serves this page: this tab's connection to it (its key), or a
// person signed in there (the session's cookie goes with the request). HTML from another origin is never drawn.
const drawsReviews = connection?.own
  ? { server: connection.server, headers: connection.key ? { Authorization: \`Bearer \${connection.key}\` } : {} }
  : connection === null && signedIn ? { server: location.origin, headers: {} } : null;
const painting = (() => {
  try {
    if (location.pathname !== base || location.search) return null;
    if (connection === "other") return null;
    if (connection) return connection;
    // A Countersign server serves this copy (its mark opens the head): no demo there, the app asks for a key.
    if (document.querySelector('meta[name="countersign-server"]')) return null;
    if (localStorage.getItem("countersign.v1.seeded") === null) return { demo: true };
    // The local inbox: the default page as the app last showed it, stored beside its index; drawn by the app too, for
    // this build, which needs no code fetched first while its times ("asked 2 hours ago") still hold.
    const head = localStorage.getItem("countersign.v1.inbox-head");
    if (head === null) return null;
    let drawn;
    try {
      drawn = JSON.parse(localStorage.getItem("countersign.v1.inbox-drawing"));
    } catch {}
    const holds = drawn?.build === build && drawn.base === base && Date.now() < drawn.until && typeof drawn.html === "string";
    return holds ? { drawing: drawn.html } : { head };
  } catch {
    return null;
  }
})();
// Its wasm is fetched (its integrity checked) and compiled at once, while its glue is fetched: it is ready when the glue
// is. A host that serves wasm under another type gets its checked bytes compiled by the glue instead.
const loadPaint = async () => {
  const compiled = fetch(firstPaint.wasm.href, { integrity: firstPaint.wasm.integrity }).then((response) => {
    if (!response.ok) throw new Error(\`\${response.url} answered \${response.status}\`);
    return response.headers.get("content-type")?.startsWith("application/wasm")
      ? WebAssembly.compileStreaming(response) : response.arrayBuffer();
  });
  const [paint, module] = await Promise.all([import(firstPaint.glue.href), compiled]);
  await paint.default({ module_or_path: module });
  return paint;
};
// Until the drawing's first row is on screen, as the browser reports it (its Element Timing name,
// countersign_markup::FIRST_ROW_TIMING), or until its frame is drawn where that is not reported; at most half a
// second, and not at all in a tab out of sight (it paints nothing). The app's start would otherwise hold the main
// thread, and its compiling the threads that raster the rows, before the browser shows the rows it was given.
const shown = () => new Promise((resolve) => {
  if (document.visibilityState !== "visible") return resolve();
  setTimeout(resolve, 500);
  if (!PerformanceObserver.supportedEntryTypes?.includes("element")) return requestAnimationFrame(() => setTimeout(resolve, 0));
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((entry) => entry.identifier === "inbox-row")) return;
    observer.disconnect();
    resolve();
  }).observe({ type: "element", buffered: true });
});
const paintFailed = (e) => console.warn("The first paint failed; the app draws the inbox itself.", e);
// Draws the first paint's HTML (written by countersign-markup) at the top of the page, unless the app has started.
// Its links work at once: the address changes, a review's code is fetched, and the app opens that screen when it
// starts. Its tabs, filters and buttons are the app's: until then they are a picture, hidden from assistive technology.
// Says whether it drew.
const draw = (html) => {
  if (!html || performance.getEntriesByName("countersign:start").length > 0) return false;
  document.body.insertAdjacentHTML("afterbegin", html);
  adopt(document.body.firstElementChild);
  return true;
};
// Makes a drawing in the page the app's stand-in until it starts: written here, or by the server in the page itself.
const adopt = (drawn) => {
  document.body.classList.add("painting");
  performance.mark("countersign:first-row");
  for (const control of drawn.querySelectorAll(".tabs, .filters, button, input, select")) {
    control.inert = true;
    control.setAttribute("aria-hidden", "true");
  }
  follow(drawn);
  performance.mark("countersign:rows-open");
};
const started = () => performance.getEntriesByName("countersign:start").length > 0;
// A drawing's links work at once: the address changes, a review's code is fetched (and the review drawn by the server
// that serves this page, when it can), and the app opens that screen when it starts.
const follow = (drawn) => {
  drawn.addEventListener("click", (event) => {
    const link = event.target.closest("a[href]");
    // Once the app has started, its router follows the link (the drawing stands until its screen comes).
    if (!link || started() || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const url = new URL(link.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(base) || url.hash) return;
    event.preventDefault();
    opening()?.removeAttribute("aria-busy");
    link.setAttribute("aria-busy", "true");
    if (url.pathname !== location.pathname) history.pushState(null, "", url.pathname);
    // A review's drawing first (a few KB), then its code: asked side by side, the code's forty-odd files would
    // hold the link, and the browser's connections to this server, with the drawing queued behind them.
    const drawing = showFor(url.pathname);
    if (url.pathname.startsWith(\`\${base}reviews/\`)) Promise.resolve(drawing).finally(preloadReview);
  });
};
const opening = () => document.querySelector(".first-paint [aria-busy]");
// The drawings for the address shown: a review's (fetched when it can be drawn), or the inbox's again when it is
// there behind it (else, and for another screen, the drawing stands, its link busy, until the app opens that screen).
const showFor = (pathname) => {
  if (started()) return;
  const id = reviewOf(pathname);
  if (id) return drawReview(id, pathname);
  reviewAsked++;
  if (pathname !== base) return;
  const review = document.querySelector("body > .first-paint[data-review]");
  const inbox = document.querySelector("body > .first-paint:not([data-review])");
  if (review && inbox) {
    review.remove();
    inbox.hidden = false;
  }
};
addEventListener("popstate", () => {
  opening()?.removeAttribute("aria-busy");
  showFor(location.pathname);
});
// The review id a path of the desk names, if any.
const reviewOf = (pathname) => {
  const rest = pathname.startsWith(\`\${base}reviews/\`) ? pathname.slice(base.length + "reviews/".length) : "";
  return /^[0-9A-Za-z-]{1,64}$/.test(rest) ? rest : null;
};
// A review as the server that serves this page draws it (GET /api/v1/reviews/{id}/page): to be read at once while
// the app loads; it has no form and no button, the decision is the app's. The inbox's drawing waits hidden behind it
// for the way back. Drawn only while its address is shown and the app has not started (the app then draws it).
let reviewAsked = 0;
const drawReview = async (id, pathname) => {
  if (!drawsReviews) return;
  const asked = ++reviewAsked;
  try {
    const query = new URLSearchParams({ base, server: drawsReviews.server });
    const r = await fetch(\`\${drawsReviews.server}/api/v1/reviews/\${id}/page?\${query}\`, { headers: drawsReviews.headers });
    if (r.status !== 200 || !r.headers.get("content-type")?.startsWith("text/html")) return;
    const html = await r.text();
    await styled;
    if (asked !== reviewAsked || location.pathname !== pathname || started()) return;
    document.querySelector("body > .first-paint[data-review]")?.remove();
    const inbox = document.querySelector("body > .first-paint");
    if (inbox) inbox.hidden = true;
    document.body.insertAdjacentHTML("afterbegin", html);
    adoptReview(document.body.firstElementChild);
  } catch (e) {
    console.warn("The review was not drawn before the app; the app draws it.", e);
  }
};
// Makes a review's drawing the app's stand-in: written here, or by the server in the page itself.
const adoptReview = (drawn) => {
  document.body.classList.add("painting");
  for (const control of drawn.querySelectorAll("button")) {
    control.inert = true;
    control.setAttribute("aria-hidden", "true");
  }
  follow(drawn);
  performance.mark("countersign:review-drawn");
};
// A Countersign server that knows this reviewer (signed in, or a key remembered on this device: its cookie) drew its
// first page, or the review at this address, into the page, with this script after it: nothing to fetch first. Unless
// this tab's connection is to that server (or a person is signed in there), the drawing is another connection's: it goes.
const served = document.querySelector("body > .first-paint");
const servedReview = served?.dataset.review !== undefined;
if (served && !(servedReview ? drawsReviews : painting?.own || (!painting && signedIn))) {
  served.remove();
  document.body.classList.remove("painting");
}
if (served?.isConnected) {
  servedReview ? adoptReview(served) : adopt(served);
} else if (painting?.drawing !== undefined) {
  await styled;
  if (draw(painting.drawing)) await shown();
} else if (painting?.demo || painting?.head) {
  try {
    const paint = await loadPaint();
    const html = painting.demo ? paint.demo_inbox(base) : paint.local_inbox(painting.head, base);
    await styled;
    if (draw(html)) await shown();
  } catch (e) {
    paintFailed(e);
  }
} else if (painting) {
  const { server, key, own } = painting;
  const headers = key ? { Authorization: \`Bearer \${key}\` } : {};
  // A server that serves this page writes the drawing itself (no code to fetch first); the page of another one is
  // written here, by the first paint's module (HTML from another origin is never put in the page).
  const html = own
    ? fetch(\`\${server}/api/v1/inbox?\${new URLSearchParams({ base, server })}\`, { headers })
      .then((r) => (r.status === 200 && r.headers.get("content-type")?.startsWith("text/html") ? r.text() : null))
    // The app's own first question: ReviewQuery { status: Pending, order: Expiring, limit: PAGE_SIZE }.
    : Promise.all([loadPaint(), fetch(\`\${server}/api/v1/reviews?view=summary&status=pending&order=expiring&limit=50\`, { headers })
      .then((r) => (r.ok ? r.text() : null))]).then(([paint, text]) => (text === null ? null : paint.served_inbox(server, text, base)));
  // Once the app has started, it lists the inbox itself: a late answer is not drawn over it.
  const drawn = html.then(async (h) => (await styled, draw(h) && (await shown()))).catch(paintFailed);
  // The app waits for the rows (its files would slow them down), but not for a slow server.
  await Promise.race([drawn, new Promise((resolve) => setTimeout(resolve, 500))]);
} else if (reviewOf(location.pathname) && drawsReviews) {
  // A review's own address (a link from Slack, an e-mail, another tab): drawn first in the same way, its code asked
  // once the drawing has come (asked beside it, the code's files would hold the drawing back, as for a tap).
  const drawing = Promise.resolve(showFor(location.pathname));
  drawing.finally(preloadReview);
  await Promise.race([drawing, new Promise((resolve) => setTimeout(resolve, 500))]);
}
// On a review's address its code comes beside the app's (at once when nothing is asked first).
if (location.pathname.startsWith(\`\${base}reviews/\`)) preloadReview();
preload(app.glue, app.loader, app.wasm);
let bindings, wasm;
try {
  bindings = await import(app.glue.href);
  await parsed;
  wasm = await bindings.default({ module_or_path: app.wasm.href });
} catch (e) {
  await parsed;
  // Without the app nothing can be decided: a first paint must not stand as if it worked.
  document.querySelector(".first-paint")?.remove();
  document.body.classList.remove("painting");
  document.body.append(Object.assign(document.createElement("div"), { className: "fatal", role: "alert",
    textContent: \`Countersign could not be loaded (\${e.message}). Check the connection and reload the page; nothing was decided.\` }));
  throw e;
}`;
// The boot script becomes a classic inline script: it runs as soon as the parser
// meets it, not after the stylesheet and the whole page (a module script waits
// for both), so the files it chooses are fetched one round trip sooner.
// scripts/harden-dist.mjs allows it by its hash.
const inline = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)];
if (inline.length !== 1) throw new Error(`${indexPath}: expected trunk's one inline boot script, found ${inline.length}`);
const [tag, code] = inline[0];
const classic = code.replace(start, () => boot);
if (/^\s*(import|export)\s/m.test(classic)) throw new Error(`${indexPath}: the boot script has a module statement left`);
// Minified: the comments above are for this file, not for every first load.
const script = await minified(`(async () => {\n${classic}\n})();`, { module: false });
html = html.replace(tag, () => `<meta name="countersign-build" content="${build}" />\n<script>${script}</script>`);
writeFileSync(indexPath, html);
console.log(`${dist}: first paint in ${paint.glue} and ${paint.wasm}; the boot script loads it on a visit to the inbox`);
