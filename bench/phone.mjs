// A reviewer on a phone's link (issue 63 §1): Lighthouse's mobile link (1.6 Mbps
// down, 750 Kbps up, 150 ms round trip), emulated by Chromium for one tab.
// Each visit reports when the inbox's first row was drawn, when a row could
// first be opened (a tap then leads to its review), what the browser fetched
// before that, and how long a tap at that moment took to show the review: to
// be read (drawn by the server, or by the app) and to be decided (the app's).
// A cold visit is a fresh browser profile (empty HTTP cache, as after an
// update of the app); a warm one opens the inbox again in the same tab.
//
// bench/run.mjs measures it (section 2c); by hand:
//   node bench/phone.mjs <origin> [<server url> <reviewer key>]
// without a server, the origin's first visit (the local demo).

import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const LINK = { offline: false, latency: 150, downloadThroughput: (1638.4 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 };
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The time of performance mark `name` in page `p`, or NaN. */
const markAt = (p, name) => p.evaluate((name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN, name);

/** What crossed the link (bodies as sent, and headers; nothing for what came from the cache) by `at` ms, in KB. */
const fetchedBy = (p, at) => p.evaluate((at) => [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
  .filter((e) => e.responseEnd > 0 && e.responseEnd <= at).reduce((sum, e) => sum + e.transferSize, 0) / 1024, at);

// In the page, from its first script: the moment a row can first be opened
// (its link works: a mark; and it is on screen: its Element Timing entry, as
// `firstRows` counts it), the first row is tapped, and the time until its
// review is drawn (a heading other than the inbox's, the drawing of the inbox
// gone) is kept. A tap before the row was shown would take it off the page
// before the browser reported it. Nothing from outside touches the page
// meanwhile: Playwright's own scripts would take its main thread while it loads.
const tapWhenOpenable = (firstRow) => {
  const marks = ["countersign:rows-open", "countersign:inbox-ready"];
  let open = false, shown = false;
  const tap = () => {
    if (!open || !shown || window.__tap) return;
    const at = performance.now();
    window.__tap = { at };
    document.querySelector(".review-row a").click();
    // Readable: its heading on screen, drawn by the server or by the app; decidable: the app's, with its form.
    const heading = () => [...document.querySelectorAll("main h1:not(#inbox-title)")].some((h) => h.checkVisibility());
    const drawn = () => heading() && !document.body.classList.contains("painting");
    new MutationObserver((_, watching) => {
      if (window.__tap.read === undefined && heading()) window.__tap.read = performance.now() - at;
      if (!drawn()) return;
      window.__tap.drawn = performance.now() - at;
      watching.disconnect();
    }).observe(document, { subtree: true, childList: true, attributes: true });
  };
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((e) => marks.includes(e.name))) return;
    observer.disconnect();
    open = true;
    tap();
  }).observe({ type: "mark", buffered: true });
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((e) => e.identifier === firstRow)) return;
    observer.disconnect();
    shown = true;
    tap();
  }).observe({ type: "element", buffered: true });
};

/** One visit of `url` in page `p` (throttled): its figures. */
async function visit(p, url) {
  await p.goto(url, { waitUntil: "commit" });
  await pause(1000);
  for (let waited = 1000; waited < 60_000; waited += 250) {
    if (await p.evaluate(() => window.__tap?.drawn !== undefined)) break;
    await pause(250);
  }
  const { drawn: tap, read } = await p.evaluate(() => window.__tap ?? {});
  if (tap === undefined) throw new Error(`${p.url()}: the tapped review was not drawn in 60 s`);
  const { drawn, openable, by } = await firstRows(p);
  const kb = await fetchedBy(p, openable);
  return { drawn, openable, kb, by, read, tap };
}

/**
 * When the first element named `name` for the Element Timing API was on
 * screen in page `p` (the frame that showed it was presented), or NaN.
 */
export const shownAt = (p, name) => p.evaluate((name) => new Promise((resolve) => {
  let first = NaN;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.identifier === name && !(e.renderTime >= first)) first = e.renderTime;
  }).observe({ type: "element", buffered: true });
  // Buffered entries come in a task of their own, soon after.
  setTimeout(() => resolve(first), 50);
}), name);

/** The inbox's first row, as the desk names it (countersign_markup::FIRST_ROW_TIMING). */
const FIRST_ROW = "inbox-row";

/**
 * When the inbox's first row was on screen (`drawn`) and could first be
 * opened (`openable`) in page `p`, and who drew it: the first paint, or the
 * app (its inbox ready) where nothing was drawn first.
 */
export async function firstRows(p) {
  const [rowsOpen, ready, drawn] = await Promise.all([markAt(p, "countersign:rows-open"), markAt(p, "countersign:inbox-ready"), shownAt(p, FIRST_ROW)]);
  if (Number.isNaN(drawn)) throw new Error(`${p.url()}: the browser reported no inbox row on screen (Element Timing "${FIRST_ROW}")`);
  // Its link works once the first paint has taken the drawing over (`rows-open`), or once the app's inbox is ready.
  const openable = Math.max(Number.isNaN(rowsOpen) ? ready : rowsOpen, drawn);
  return { drawn, openable, by: Number.isNaN(rowsOpen) ? "app" : "first paint" };
}

/**
 * Writes into `dir` the floor of a drawn first page: the rows the server at
 * `server` draws, in a static page with the desk's stylesheet and nothing
 * else (no script, no second question), to be served from a static host.
 */
export async function writeFloor(dir, server, dist = "dist") {
  const answer = await fetch(`${server.url}/api/v1/inbox?${new URLSearchParams({ base: "/", server: server.url })}`, { headers: { Authorization: `Bearer ${server.key}` } });
  if (answer.status !== 200) throw new Error(`${server.url}/api/v1/inbox answered ${answer.status}`);
  const css = readdirSync(dist).find((f) => /^main-[0-9a-f]{16}\.css$/.test(f));
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(dist, css), join(dir, css));
  writeFileSync(join(dir, "index.html"), `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Countersign</title><link rel="stylesheet" href="/${css}"></head><body>${await answer.text()}</body></html>`);
}

/** The static floor's page at `url`, cold, `runs` times: when its first row was on screen, ms. */
export async function floorPaints(browser, url, runs) {
  const paints = [];
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const p = await context.newPage();
    const cdp = await context.newCDPSession(p);
    await cdp.send("Network.emulateNetworkConditions", LINK);
    await p.goto(url, { waitUntil: "commit" });
    await pause(2000);
    paints.push(await shownAt(p, FIRST_ROW));
    await context.close();
  }
  return paints;
}

/**
 * Cold and warm visits of the inbox at `origin`, `runs` times each, in fresh
 * contexts of `browser`; with `server` a connection saved for the tab ({url,
 * key}) or remembered on the device ({url, key, remembered: true}, with the
 * page key's cookie), or a signed-in reviewer's session ({cookies}); cookies
 * as Playwright lists them.
 */
export async function phoneLink(browser, origin, server, runs) {
  const cold = [], warm = [];
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    if (server?.cookies) await context.addCookies(server.cookies);
    if (server?.key) {
      await context.addInitScript((s) => (s.remembered ? localStorage : sessionStorage)
        .setItem("countersign.v1.connection", JSON.stringify({ url: s.url, key: s.key, backend: "countersign" })), server);
    }
    await context.addInitScript(tapWhenOpenable, FIRST_ROW);
    const p = await context.newPage();
    const cdp = await context.newCDPSession(p);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", LINK);
    cold.push(await visit(p, `${origin}/`));
    // A first visit's second look is a returning reviewer of the demo: the demo is stored by now.
    warm.push(await visit(p, `${origin}/`));
    await context.close();
  }
  return { cold, warm };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { chromium } = await import("@playwright/test");
  const { spawn } = await import("node:child_process");
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const [origin, url, key] = process.argv.slice(2);
  if (!origin) throw new Error("usage: node bench/phone.mjs <origin> [<server url> <reviewer key>]");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--disable-quic"] });
  const runs = Number(process.env.RUNS ?? 3);
  const { cold, warm } = await phoneLink(browser, origin, url && { url, key }, runs);
  const show = (label, v) => console.log(`${label}: drawn ${v.drawn.toFixed(0)} ms, openable ${v.openable.toFixed(0)} ms (${v.by}) after ${v.kb.toFixed(1)} KB, tap → review readable ${v.read.toFixed(0)} ms, decidable ${v.tap.toFixed(0)} ms`);
  cold.forEach((v) => show("cold", v));
  warm.forEach((v) => show("warm", v));
  if (url) {
    const dir = mkdtempSync(join(tmpdir(), "countersign-floor-"));
    await writeFloor(dir, { url, key });
    const host = spawn("node", ["scripts/serve-dist.mjs", dir, "7899"], { stdio: "ignore" });
    await pause(1000);
    console.log(`static floor: first row on screen ${(await floorPaints(browser, "http://127.0.0.1:7899/", runs)).map((t) => t.toFixed(0)).join(", ")} ms`);
    host.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  await browser.close();
}
