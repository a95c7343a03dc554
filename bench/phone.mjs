// A reviewer on a phone's link (issue 63 §1): Lighthouse's mobile link (1.6 Mbps
// down, 750 Kbps up, 150 ms round trip), emulated by Chromium for one tab.
// Each visit reports when the inbox's first row was drawn, when a row could
// first be opened (a tap then leads to its review), what the browser fetched
// before that, and how long a tap at that moment took to show the review.
// A cold visit is a fresh browser profile (empty HTTP cache, as after an
// update of the app); a warm one opens the inbox again in the same tab.
//
// bench/run.mjs measures it (section 2c); by hand:
//   node bench/phone.mjs <origin> [<server url> <reviewer key>]
// without a server, the origin's first visit (the local demo).

const LINK = { offline: false, latency: 150, downloadThroughput: (1638.4 * 1024) / 8, uploadThroughput: (750 * 1024) / 8 };
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The time of performance mark `name` in page `p`, or NaN. */
const markAt = (p, name) => p.evaluate((name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN, name);

/** What crossed the link (bodies as sent, and headers; nothing for what came from the cache) by `at` ms, in KB. */
const fetchedBy = (p, at) => p.evaluate((at) => [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
  .filter((e) => e.responseEnd > 0 && e.responseEnd <= at).reduce((sum, e) => sum + e.transferSize, 0) / 1024, at);

// In the page, from its first script: the moment a row can first be opened
// (a mark), the first row is tapped, and the time until its review is drawn
// (a heading other than the inbox's, the drawing of the inbox gone) is kept.
// Nothing from outside touches the page meanwhile: Playwright's own scripts
// would take its main thread while it loads.
const tapWhenOpenable = () => {
  const marks = ["countersign:rows-open", "countersign:inbox-ready"];
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((e) => marks.includes(e.name))) return;
    observer.disconnect();
    const at = performance.now();
    window.__tap = { at };
    document.querySelector(".review-row a").click();
    const drawn = () => document.querySelector("main h1:not(#inbox-title)") && !document.body.classList.contains("painting");
    new MutationObserver((_, watching) => {
      if (!drawn()) return;
      window.__tap.drawn = performance.now() - at;
      watching.disconnect();
    }).observe(document, { subtree: true, childList: true, attributes: true });
  }).observe({ type: "mark", buffered: true });
};

/** One visit of `url` in page `p` (throttled): its figures. */
async function visit(p, url) {
  await p.goto(url, { waitUntil: "commit" });
  await pause(1000);
  for (let waited = 1000; waited < 60_000; waited += 250) {
    if (await p.evaluate(() => window.__tap?.drawn !== undefined)) break;
    await pause(250);
  }
  const tap = await p.evaluate(() => window.__tap?.drawn);
  if (tap === undefined) throw new Error(`${p.url()}: the tapped review was not drawn in 60 s`);
  const [painted, rowsOpen, ready, paint] = await Promise.all(["countersign:first-row", "countersign:rows-open", "countersign:inbox-ready", "first-contentful-paint"].map((m) => markAt(p, m)));
  // The first paint's rows are on screen at the page's first paint (they are all it shows), once its stylesheet is there.
  const drawn = Number.isNaN(painted) ? ready : Math.max(painted, paint);
  const openable = Number.isNaN(rowsOpen) ? ready : Math.max(rowsOpen, drawn);
  const kb = await fetchedBy(p, openable);
  return { drawn, openable, kb, by: Number.isNaN(rowsOpen) ? "app" : "first paint", tap };
}

/**
 * Cold and warm visits of the inbox at `origin`, `runs` times each, in fresh
 * contexts of `browser`; with `server` ({url, key}) a saved connection.
 */
export async function phoneLink(browser, origin, server, runs) {
  const cold = [], warm = [];
  for (let run = 0; run < runs; run++) {
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    if (server) {
      await context.addInitScript((s) => sessionStorage.setItem("countersign.v1.connection", JSON.stringify({ url: s.url, key: s.key, backend: "countersign" })), server);
    }
    await context.addInitScript(tapWhenOpenable);
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
  const [origin, url, key] = process.argv.slice(2);
  if (!origin) throw new Error("usage: node bench/phone.mjs <origin> [<server url> <reviewer key>]");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--disable-quic"] });
  const { cold, warm } = await phoneLink(browser, origin, url && { url, key }, Number(process.env.RUNS ?? 3));
  const show = (label, v) => console.log(`${label}: drawn ${v.drawn.toFixed(0)} ms, openable ${v.openable.toFixed(0)} ms (${v.by}) after ${v.kb.toFixed(1)} KB, tap → review ${v.tap.toFixed(0)} ms`);
  cold.forEach((v) => show("cold", v));
  warm.forEach((v) => show("warm", v));
  await browser.close();
}
