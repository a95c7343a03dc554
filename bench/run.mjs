// Countersign's benchmarks, side by side with their peers in the same run:
//   1. size of the release build (raw / gzip / brotli) beside a minimal Leptos
//      app built with the same profile, and what each crate's code weighs;
//   2. the inbox in headless chromium with 100, 1,000 and 10,000 stored reviews,
//      beside a plain hand-written JavaScript page rendering the same rows; the
//      desk on a server; a reviewer on a phone's link;
//   3. plan DAG layout in wasm beside dagre (npm) on the same graphs in the same
//      page, with the edge crossings each leaves and the time to draw;
//   4. canonical JSON + SHA-256 in wasm beside an npm RFC 8785 implementation
//      with WebCrypto, in the same page, and natively (criterion);
//   5. the server (crates/server/examples/load.rs) on SQLite and PostgreSQL, and
//      a bare SQLite insert loop as the durable-write floor.
// Each case runs several times: median and spread, and the ratio to its peer.
// Writes BENCHMARKS.md and bench/layout-time.svg. Runs offline and stops every
// process it starts.
//
// Usage: node bench/run.mjs [--quick] [--built] [--prepare] [--only 2,5]
//   --quick: smallest sizes, one or two runs, nothing written (the test command
//   runs it so the benchmarks cannot rot); the tables go to standard output.
//   --built: dist/ was just built by scripts/build-app.sh (the test command
//   builds it before its browser tests): it is measured as it is.
//   --prepare: only build the benchmarks' own wasm and the Leptos floor, then
//   stop (the test command builds them beside its other work).
//   --only: measure only the sections named (1, 2, 2b, 2c, 3, 4, 5, 5b, 5c, 6,
//   6b, 7, 8; 5 includes the lists over 1,000,000 reviews) and put them in
//   place of theirs in BENCHMARKS.md, whose first lines say which run
//   measured each section: the whole run takes hours.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { distFiles } from "../scripts/dist-files.mjs";
import { wasmOpt } from "../scripts/wasm-tools.mjs";
import { chromium } from "@playwright/test";
import { firstRows, floorPaints, phoneLink, shownAt, writeFloor } from "./phone.mjs";
import { signIn as signInAs, signInSettings, startProvider } from "../tests/e2e/sign-in-support.mjs";
import { layoutPlot } from "./plot.mjs";
import { crateShares } from "./wasm-names.mjs";

const quick = process.argv.includes("--quick");
const built = process.argv.includes("--built");
const prepare = process.argv.includes("--prepare");
const onlyAt = process.argv.indexOf("--only");
const only = onlyAt < 0 ? null : (process.argv[onlyAt + 1] ?? "").split(",").filter(Boolean);
const sections = ["1", "2", "2b", "2c", "3", "4", "5", "5b", "5c", "6", "6b", "7", "8"];
if (only && (only.length === 0 || only.some((s) => !sections.includes(s)))) {
  console.error(`--only takes sections separated by commas, of ${sections.join(", ")}: got "${process.argv[onlyAt + 1] ?? ""}"`);
  process.exit(2);
}
const wanted = (section) => !only || only.includes(section);
const today = new Date().toISOString().slice(0, 10);
const root = new URL("..", import.meta.url).pathname;
process.chdir(root);
process.env.PATH = `${root}node_modules/.bin:${process.env.PATH}`;
const md = [];
const say = (line = "") => {
  console.log(line);
  md.push(line);
};
const started = [];
const cleanup = () => {
  for (const child of started) {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
};
process.on("exit", cleanup);
process.on("SIGINT", () => process.exit(130));

const sh = (command, args, options = {}) => execFileSync(command, args, { stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 << 20, ...options })?.toString() ?? "";
const sorted = (xs) => [...xs].sort((a, b) => a - b);
const median = (xs) => sorted(xs)[Math.floor(xs.length / 2)];
const spread = (xs, unit = "ms", digits = 1) => {
  const s = sorted(xs);
  return s.length > 1 ? `${median(xs).toFixed(digits)} ${unit} (${s[0].toFixed(digits)}–${s[s.length - 1].toFixed(digits)})` : `${s[0].toFixed(digits)} ${unit}`;
};
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
const kb = (bytes) => (bytes / 1024).toFixed(1);
const table = (header, rows) => {
  say(`| ${header.join(" | ")} |`);
  say(`|${header.map(() => "---").join("|")}|`);
  for (const row of rows) say(`| ${row.join(" | ")} |`);
  say();
};

// ---------------------------------------------------------------- builds
console.log(`== building: ${built || prepare ? "" : "release app, "}bench wasm, Leptos floor`);
if (!built && !prepare) sh("scripts/build-app.sh", [], { stdio: ["ignore", "ignore", "inherit"] });
// The wasm measured here (the benchmarks' own and the Leptos floor) is built as scripts/build-app.sh
// builds what ships: by plain rustc (a linting wrapper, as the test command sets, turns MIR optimisations
// off) and with the app, which is then fresh: the domain and Leptos compiled as the app ships them, and
// every dependency the app's build compiled reused.
const { RUSTC_WORKSPACE_WRAPPER, CLIPPY_ARGS, ...shipped } = process.env;
sh("cargo", ["build", "-q", "-p", "countersign-app", "--features", "countersign-app/split", "-p", "countersign-bench", "-p", "countersign-floor", "--target", "wasm32-unknown-unknown", "--profile", "wasm-release"], { env: shipped });
const page = "target/bench-page";
rmSync(page, { recursive: true, force: true });
mkdirSync(page, { recursive: true });
sh("wasm-bindgen", ["--target", "web", "--out-dir", `${page}/pkg`, "target/wasm32-unknown-unknown/wasm-release/countersign_bench.wasm"]);
for (const file of readdirSync("bench/page")) copyFileSync(`bench/page/${file}`, `${page}/${file}`);
copyFileSync("node_modules/@dagrejs/dagre/dist/dagre.min.js", `${page}/dagre.min.js`);
copyFileSync("node_modules/canonicalize/lib/canonicalize.js", `${page}/canonicalize.js`);
// The floor's page: its wasm-bindgen glue and its wasm through the app's wasm-opt (it is not split).
const floorDir = "target/bench-floor";
rmSync(floorDir, { recursive: true, force: true });
mkdirSync(floorDir, { recursive: true });
sh("wasm-bindgen", ["--target", "web", "--no-typescript", "--out-dir", `${floorDir}/bindgen`, "target/wasm32-unknown-unknown/wasm-release/countersign-floor.wasm"]);
sh(...wasmOpt(`${floorDir}/bindgen/countersign-floor_bg.wasm`, `${floorDir}/countersign-floor_bg.wasm`));
copyFileSync(`${floorDir}/bindgen/countersign-floor.js`, `${floorDir}/countersign-floor.js`);
rmSync(`${floorDir}/bindgen`, { recursive: true });
copyFileSync("bench/floor/index.html", `${floorDir}/index.html`);
if (prepare) process.exit(0);

// The server and its examples. The smoke run takes the debug profile the tests
// have built (a release build of the server is minutes), made to carry dist/ as
// a release build does by itself (crates/server/build.rs).
const serverDir = quick ? "target/debug" : "target/release";
const buildNative = (...targets) =>
  sh("cargo", ["build", "-q", ...(quick ? [] : ["--release"]), "-p", "countersign-server", "--bin", "countersign", ...targets], {
    env: { ...process.env, ...(quick ? { COUNTERSIGN_APP_DIR: resolve("dist") } : {}) },
  });

const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GB RAM`;
const chromiumVersion = sh(process.env.CHROMIUM ?? "/usr/bin/chromium", ["--version"], { stdio: ["ignore", "pipe", "ignore"] }).trim();
say("# Benchmarks");
say();
say(`Produced by \`node bench/run.mjs\` on ${today}: ${machine}; ${chromiumVersion} headless.`);
say("Every case runs several times in the same session as its peer: median (min–max), and the ratio to the peer.");
say();

// ---------------------------------------------------------------- 1. size
const sizes = (dir, files = distFiles(dir).firstLoad) =>
  files
    .map((f) => {
      const body = readFileSync(join(dir, f));
      return {
        file: f.replace(/-[0-9a-f]{16}/, ""),
        raw: body.length,
        gzip: gzipSync(body, { level: 9 }).length,
        brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
      };
    });
const total = (files) => files.reduce((t, f) => ({ raw: t.raw + f.raw, gzip: t.gzip + f.gzip, brotli: t.brotli + f.brotli }), { raw: 0, gzip: 0, brotli: 0 });
if (wanted("1")) {
  const app = sizes("dist"), floor = sizes("target/bench-floor");
  const appTotal = total(app), floorTotal = total(floor);
  const later = sizes("dist", distFiles("dist").onDemand), laterTotal = total(later);
  const paint = sizes("dist", distFiles("dist").firstPaint), paintTotal = total(paint);
  say("## 1. Size of the first load (KB)");
  say();
  table(["file", "raw", "gzip", "brotli"], [
    ...app.map((f) => [`app: ${f.file}`, kb(f.raw), kb(f.gzip), kb(f.brotli)]),
    ["**app, first load**", kb(appTotal.raw), kb(appTotal.gzip), `**${kb(appTotal.brotli)}** (budget 250)`],
    ...floor.map((f) => [`Leptos floor: ${f.file}`, kb(f.raw), kb(f.gzip), kb(f.brotli)]),
    ["**Leptos floor, first load**", kb(floorTotal.raw), kb(floorTotal.gzip), `**${kb(floorTotal.brotli)}**`],
    ["app ÷ floor", ratio(appTotal.raw, floorTotal.raw), ratio(appTotal.gzip, floorTotal.gzip), ratio(appTotal.brotli, floorTotal.brotli)],
    ...paint.map((f) => [`first paint: ${f.file}`, kb(f.raw), kb(f.gzip), kb(f.brotli)]),
    ["**first paint** (drawn before the app)", kb(paintTotal.raw), kb(paintTotal.gzip), `**${kb(paintTotal.brotli)}**`],
  ]);
  say(`The first load is what the inbox needs. The review page, import, settings and the demo data are cut into ${later.length} chunks (\`scripts/split-app.mjs\`), fetched when a screen first opens or while the reviewer reads the inbox: ${kb(laterTotal.raw)} KB raw, ${kb(laterTotal.brotli)} KB brotli in all. Largest: ${later.sort((a, b) => b.brotli - a.brotli).slice(0, 3).map((f) => `${f.file} ${kb(f.brotli)} KB`).join(", ")}.`);
  say();
  const shares = crateShares(readFileSync("target/wasm32-unknown-unknown/wasm-release/countersign-app.wasm"));
  say("Where the app's code goes, by crate (bytes of function bodies before wasm-opt, from the wasm's name section; the shipped wasm is smaller, the shares are what matter):");
  say();
  table(["crate", "KB", "share"], shares.slice(0, 14).map(([crate, bytes, share]) => [crate, kb(bytes), `${(share * 100).toFixed(1)} %`]));
}

// ---------------------------------------------------------------- browser
const freePort = () => Number(sh("node", ["-e", "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"]).trim());
async function serve(dir) {
  const port = freePort();
  const child = spawn("node", ["scripts/serve-dist.mjs", dir, String(port)], { stdio: "ignore" });
  started.push(child);
  for (let i = 0; i < 50; i++) {
    if (await fetch(`http://127.0.0.1:${port}/`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return `http://127.0.0.1:${port}`;
}
const appUrl = await serve("dist");
const pageUrl = await serve(page);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  // dagre lays out recursively: on a 5,000-step plan its first (interpreted)
  // run can exceed V8's default 1 MB stack, so the JS stack gets 4 MB (the
  // renderer's main thread has 8 MB). It changes nothing else.
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--enable-precise-memory-info", "--js-flags=--stack-size=4000"],
});

// ---------------------------------------------------------------- 2. inbox
const id = (prefix, n) => `${prefix}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
function review(n) {
  const plan = id("bbbbbbbb", n);
  const step = (i) => id(`d${(n % 0xfffffff).toString(16).padStart(7, "0")}`, i);
  return {
    confirm: {
      meta, confirm_id: id("aaaaaaaa", n), target_type: "plan", target_id: plan, status: n % 4 === 0 ? "approved" : "pending",
      requested_by_role: `agent-${n % 7}`, requested_at: new Date(Date.UTC(2026, 10, 1) + n * 60000).toISOString(),
      reason: `Request number ${n} to change production settings`,
      // Every fourth one is decided, with its decision in the history.
      ...(n % 4 === 0 && { decisions: [{ decision_id: id("eeeeeeee", n), status: "approved", decided_by_role: "reviewer", decided_at: new Date(Date.UTC(2026, 10, 2) + n * 60000).toISOString(), reason: "Checked" }] }),
    },
    target: { plan: {
      meta, plan_id: plan, context_id: id("cccccccc", 1), title: `Plan ${n}: migrate shard ${n}`, objective: "Keep data safe", status: "proposed",
      steps: [0, 1, 2].map((i) => ({ step_id: step(i), description: `Step ${i} of plan ${n}: copy shard and verify`, status: "pending", agent_role: "migrator", dependencies: i ? [step(i - 1)] : [] })),
    } },
  };
}
// The app keeps an inbox index, its head and the head's drawing beside the
// reviews (small values it writes itself once it has read them), so a
// reviewer's storage holds them after the first visit. They are taken from a visit in a throwaway
// context, then stored with the reviews for both pages (the plain page ignores them).
async function withIndex(entries) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${appUrl}/icon.svg`);
  await page.evaluate((entries) => {
    localStorage.setItem("countersign.v1.seeded", "1");
    for (const [k, v] of entries) localStorage.setItem(k, v);
  }, entries);
  await page.goto(`${appUrl}/`);
  const keys = ["countersign.v1.inbox-index", "countersign.v1.inbox-head", "countersign.v1.inbox-drawing"];
  await page.waitForFunction((keys) => keys.every((k) => localStorage.getItem(k) !== null), keys, { timeout: 60000 });
  const written = await page.evaluate((keys) => keys.map((k) => [k, localStorage.getItem(k)]), keys);
  await context.close();
  return [...entries, ...written];
}
// A fresh browser context whose local storage holds `entries` before the
// measured navigation: they are written from a static file of the same origin
// (`file`), so neither page pays for storing them while it loads.
async function seeded(entries, origin, file) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/${file}`);
  await page.evaluate((entries) => {
    localStorage.setItem("countersign.v1.seeded", "1");
    for (const [k, v] of entries) {
      try {
        localStorage.setItem(k, v);
      } catch {
        break; // quota: both pages then read the same reviews that fit
      }
    }
  }, entries);
  return { context, p: page };
}
const markAt = (p, name) => p.evaluate((name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN, name);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Opens `url` and waits, from outside the page, until it has set the mark
// `name`; returns the mark's time. Playwright's own waits (`goto` until the load
// event, `waitForFunction`) run its utility script in the page, about 20 ms of
// main-thread work: the plain page has set its mark before its load event, the
// app's load event comes before its wasm has started, so that work would land
// in the middle of the app's start-up only. Here the page runs untouched until
// the first look, a second later, and then every quarter second.
async function openAndMark(p, url, name) {
  await p.goto(url, { waitUntil: "commit" });
  return untilMark(p, name, 1000);
}
async function untilMark(p, name, first = 250) {
  await pause(first);
  for (let waited = first; waited < 60000; waited += 250) {
    const at = await markAt(p, name);
    if (!Number.isNaN(at)) return at;
    await pause(250);
  }
  throw new Error(`${p.url()}: no performance mark ${name} after 60 s`);
}
// The first row a person can open, as §2c counts it: the first paint's rows once on screen, else the app's.
const rowsOpen = async (p) => (await firstRows(p)).openable;
// The plain page's rows on screen (its first row, by the Element Timing API), after its mark at `ready`.
async function plainRows(p, ready) {
  const shown = await shownAt(p, "plain:first-row");
  if (Number.isNaN(shown)) throw new Error(`${p.url()}: the browser reported no row on screen`);
  return Math.max(ready, shown);
}
const keystroke = (p) => p.evaluate(async () => {
  const input = document.getElementById("search");
  const t0 = performance.now();
  input.value = "shard 7";
  input.dispatchEvent(new Event("input", { bubbles: true }));
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0;
});
const heap = (p) => p.evaluate(() => performance.memory.usedJSHeapSize / 2 ** 20);

if (wanted("2")) {
  say("## 2. Inbox in headless chromium");
  say();
  say("From navigation to the inbox rendered and ready for input, with N reviews already in local storage (written before the measured navigation, from a static file of the same origin, so neither page pays for storing them). The plain page (`bench/page/plain-inbox.mjs`) is hand-written JavaScript that reads, parses and sorts the same stored reviews and renders the same 50 rows: the browser's floor. Each run opens the app, then the plain page, each in a fresh browser context; the pages are left alone until they have set their mark (the harness looks a second later: Playwright's own waits run its script in the page, which would land inside the app's start-up only). For the app, two moments: the first row a person can open, counted as §2c counts it (on a return to the local inbox, the first paint, `crates/first-paint`, draws the head the app stored beside its index before the app's code is fetched, and its links open their screen, the app opening it when it starts: the first row on screen, as the browser reports it through the Element Timing API (the row's title is named `inbox-row`), once its link works (mark `countersign:rows-open`; where nothing was drawn first, the app's inbox ready), and the whole app ready, its tabs, filters and search included (mark `countersign:inbox-ready`). For the plain page the same two: its first row on screen (named `plain:first-row`) and its rows and search box ready (mark `plain:inbox-ready`). The budget is on rows on screen against rows on screen, as for a reviewer on a phone's link (§2c); the whole app is compared mark against mark. The app is fetched once the first paint's rows are on screen, so it is ready later than it would be alone. \"From its wasm's start\": the app's own work, from its first line running (mark `countersign:start`) to the inbox ready; the rest is the browser fetching, compiling and starting it. Filter: the app's status tab; search: one keystroke until the list is redrawn.");
  say();
  say("The app draws its first page from its inbox index's head (two local-storage values it keeps: a summary of every review, and the default first page with the counts per status and the requesters, written by the app itself on an earlier visit; both pages' storage holds them), parses the index right after the first frame, then reads every stored review, 200 per task, checking each as before (the code that parses and checks reviews is fetched then: it is not in the first load); the column \"app: every review read\" says when all were read and the longest task meanwhile (0: none over 50 ms, so input was never held up longer). \"First visit\" is storage without an index yet: the app then shows its first page once every review is read.");
  say();
  const inboxRows = [], againRows = [];
  const cases = (quick ? [100] : [100, 1000, 10000]).map((count) => ({ count, index: true }));
  if (!quick) cases.splice(2, 0, { count: 1000, index: false });
  for (const { count, index } of cases) {
    const reviews = Array.from({ length: count }, (_, n) => review(n + 1));
    // Local storage holds about 5.2 million characters (keys and values): the
    // reviews that fit beside their index (about 210 characters each) and its
    // head (a page of 50, about 12,000) are stored.
    let room = 5_200_000 - 15_000;
    const plainEntries = reviews
      .map((r) => [`countersign.v1.review.${r.confirm.confirm_id}`, JSON.stringify(r)])
      .filter(([k, v]) => (room -= k.length + v.length + 210) > 0);
    const entries = index ? await withIndex(plainEntries) : plainEntries;
    const m = { open: [], openAgain: [], app: [], work: [], read: [], plain: [], plainRows: [], appAgain: [], plainAgain: [], plainRowsAgain: [], appSearch: [], plainSearch: [], filter: [], appHeap: [], plainHeap: [], longest: [] };
    let stored = 0;
    // The 1,000-review inbox carries the target, and single loads on this
    // machine spread widely: its median is taken over more runs.
    const runs = quick ? 1 : count === 1000 && index ? 21 : 9;
    for (let run = 0; run < runs; run++) {
      let { context, p } = await seeded(entries, appUrl, "icon.svg");
      // Tasks over 50 ms (the long tasks API), to show that reading the reviews
      // after the first page does not hold up input.
      await p.addInitScript(() => {
        window.__longTasks = [];
        new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => [e.startTime, e.duration]))).observe({ type: "longtask" });
      });
      m.app.push(await openAndMark(p, `${appUrl}/`, "countersign:inbox-ready"));
      m.open.push(await rowsOpen(p));
      m.work.push(m.app.at(-1) - (await markAt(p, "countersign:start")));
      {
        m.read.push(await untilMark(p, "countersign:reviews-read"));
        // The longest task after the first page, up to every review read (0: none over 50 ms).
        m.longest.push(await p.evaluate(() => {
          const [ready, read] = ["countersign:inbox-ready", "countersign:reviews-read"].map((n) => performance.getEntriesByName(n)[0].startTime);
          return Math.max(0, ...window.__longTasks.filter(([start]) => start > ready && start <= read).map(([, duration]) => duration));
        }));
      }
      m.appHeap.push(await heap(p));
      stored = await p.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.review.")).length);
      m.filter.push(await p.evaluate(async () => {
        const tab = [...document.querySelectorAll(".tabs button")].find((b) => b.textContent.startsWith("Approved"));
        const t0 = performance.now();
        tab.click();
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - t0;
      }));
      // The reviewer comes back: the same tab opens the inbox again, with the
      // app's files and compiled code in the browser's caches.
      m.appAgain.push(await openAndMark(p, `${appUrl}/`, "countersign:inbox-ready"));
      m.openAgain.push(await rowsOpen(p));
      // The keystroke searches every review, so it waits until they are read.
      await untilMark(p, "countersign:reviews-read");
      m.appSearch.push(await keystroke(p));
      await context.close();
      ({ context, p } = await seeded(entries, pageUrl, "plain-inbox.mjs"));
      m.plain.push(await openAndMark(p, `${pageUrl}/plain-inbox.html`, "plain:inbox-ready"));
      m.plainRows.push(await plainRows(p, m.plain.at(-1)));
      m.plainHeap.push(await heap(p));
      m.plainAgain.push(await openAndMark(p, `${pageUrl}/plain-inbox.html`, "plain:inbox-ready"));
      m.plainRowsAgain.push(await plainRows(p, m.plainAgain.at(-1)));
      m.plainSearch.push(await keystroke(p));
      await context.close();
    }
    inboxRows.push([
      `${count}${stored < count ? ` (${stored} fit in storage)` : ""}${index ? "" : ", first visit (no index yet)"}`,
      spread(m.open), spread(m.app), spread(m.plainRows), spread(m.plain), `**${ratio(median(m.open), median(m.plainRows))}**`, ratio(median(m.app), median(m.plain)), `${m.app.length}`, spread(m.work),
      `${spread(m.read)}; longest task ${spread(m.longest)}`,
      spread(m.filter), spread(m.appSearch), spread(m.plainSearch), `${spread(m.appHeap, "MB")} / ${spread(m.plainHeap, "MB")}`,
    ]);
    if (index) {
      againRows.push([`${count}${stored < count ? ` (${stored})` : ""}`, spread(m.openAgain), spread(m.appAgain), spread(m.plainRowsAgain), spread(m.plainAgain), `**${ratio(median(m.openAgain), median(m.plainRowsAgain))}**`, ratio(median(m.appAgain), median(m.plainAgain))]);
    }
  }
  table(["reviews", "app: a row can be opened", "app: whole app ready", "plain JS: rows on screen", "plain JS: ready", "app ÷ plain: a row (budget ≤ 1.2×)", "app ÷ plain: whole app", "runs", "app: from its wasm's start", "app: every review read", "app: filter", "app: search key", "plain: search key", "JS heap app / plain"], inboxRows);
  say("The app's JS heap excludes its wasm memory (the reviews live there); the plain page keeps everything in the JS heap.");
  say();
  say("A returning reviewer: after each run above, the same tab opens the inbox again (as a reviewer who comes back to it), so the browser has each page's files and compiled code in its caches. The runs above are the cold case: a fresh browser profile whose storage already holds the reviews, as after an update of the app (new files) or a cleared cache.");
  say();
  table(["reviews", "app: a row can be opened, again", "app: whole app ready, again", "plain JS: rows on screen, again", "plain JS: ready, again", "app ÷ plain: a row (budget ≤ 1.2×)", "app ÷ plain: whole app"], againRows);
}

// ---------------------------------------------------------------- 2b. server desk
// The desk on `countersign serve` holding N reviews (the server's seed
// example), cold: a fresh browser context with the connection saved.
buildNative("--example", "seed", "--example", "load");
const brotliOf = new Map();
// What a file of dist/ weighs with brotli (quality 11, as compress-dist.mjs writes it).
const brotliKb = (name) => {
  if (!brotliOf.has(name)) {
    const path = join("dist", name);
    brotliOf.set(name, existsSync(path) ? brotliCompressSync(readFileSync(path), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length : 0);
  }
  return brotliOf.get(name) / 1024;
};
// With `signIn(dir)`: served with those sign-in settings (a file it writes into the desk's folder), on `port`.
async function seededServer(count, { port = freePort(), signIn } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-desk."));
  const key = sh(`${serverDir}/examples/seed`, ["--database", `sqlite://${dir}/countersign.db`, "--count", String(count)]).match(/reviewer key: (\S+)/)[1];
  const settings = signIn ? ["--sign-in", signIn(dir)] : [];
  const child = spawn(`${serverDir}/countersign`, ["serve", "--listen", `127.0.0.1:${port}`, "--app-dir", "dist", "--data", dir, ...settings], { stdio: "ignore" });
  started.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100 && !(await fetch(`${url}/api/v1/health`).then((r) => r.ok, () => false)); i++) await pause(100);
  return { url, key, stop: () => (child.kill("SIGKILL"), rmSync(dir, { recursive: true, force: true })) };
}
// Opens the inbox cold (on a server when `server` is given, else the local
// demo on its first visit) and reports: navigation to the first rows drawn,
// what the browser fetched before them (files as brotli, API answers as
// sent), the app's wasm memory, and one search keystroke until its rows are drawn.
async function coldDesk(origin, server) {
  const context = await browser.newContext();
  await context.addInitScript((server) => {
    if (server) sessionStorage.setItem("countersign.v1.connection", JSON.stringify({ url: server.url, key: server.key, backend: "countersign" }));
    addEventListener("TrunkApplicationStarted", (e) => (window.__wasm = e.detail.wasm));
  }, server && { url: server.url, key: server.key });
  const p = await context.newPage();
  const appReady = await openAndMark(p, `${origin}/`, "countersign:inbox-ready");
  // The first rows are drawn first by the first paint (crates/first-paint), where it runs.
  const painted = await markAt(p, "countersign:first-row");
  const ready = Number.isNaN(painted) ? appReady : painted;
  const fetched = await p.evaluate((ready) => [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]
    .filter((e) => e.responseEnd > 0 && e.responseEnd <= ready).map((e) => [new URL(e.name).pathname, e.encodedBodySize]), ready);
  const api = fetched.filter(([path]) => path.startsWith("/api/"));
  const files = fetched.filter(([path]) => !path.startsWith("/api/"));
  const apiKb = api.reduce((sum, [, bytes]) => sum + bytes, 0) / 1024;
  const filesKb = files.reduce((sum, [path]) => sum + brotliKb(path === "/" ? "index.html" : path.slice(1)), 0);
  const memory = await p.evaluate(() => window.__wasm.memory.buffer.byteLength / 2 ** 20);
  const search = !server ? NaN : await p.evaluate(async () => {
    const input = document.getElementById("search");
    const titles = () => [...document.querySelectorAll(".review-title")];
    const drawn = () => titles().length > 0 && titles().every((t) => t.textContent.includes("Plan 42"));
    const t0 = performance.now();
    input.value = "Plan 42";
    input.dispatchEvent(new Event("input", { bubbles: true }));
    while (!drawn()) {
      if (performance.now() - t0 > 10_000) throw new Error("the search's rows were not drawn in 10 s");
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now() - t0;
  });
  await context.close();
  return { ready, appReady, apiKb, filesKb, count: fetched.length, memory, search };
}

if (wanted("2b")) {
  say("## 2b. The desk on a server, and the first visit");
  say();
  say("`countersign serve` (release build, SQLite) holding N reviews from the server's seed example (`crates/server/examples/seed.rs`: three in four pending, seven requesting agents), in a fresh browser context with the connection saved (its session storage), cold: navigation to the inbox's first rows drawn (mark `countersign:first-row`: the first paint, `crates/first-paint`, draws the server's first page before the app is fetched; the app then replaces it) and to the app ready (mark `countersign:inbox-ready`); what the browser fetched before the first rows (the app's files as brotli at quality 11, as the server sends them precompressed, and the API's answers as sent); the app's wasm memory once it is ready; and one search keystroke (\"Plan 42\") until its rows are drawn. The last row: the local demo on its first visit (empty storage; its files measured the same way), whose first rows the first paint draws from the demo's summaries.");
  say();
  const deskRows = [];
  const deskSizes = quick ? [100] : [100, 100_000, 1_000_000];
  const deskMedians = {};
  for (const count of deskSizes) {
    const server = await seededServer(count);
    const m = { ready: [], appReady: [], api: [], files: [], memory: [], search: [] };
    const runs = quick ? 1 : 9;
    for (let run = 0; run < runs; run++) {
      const r = await coldDesk(server.url, server);
      m.ready.push(r.ready), m.appReady.push(r.appReady), m.api.push(r.apiKb), m.files.push(r.filesKb), m.memory.push(r.memory), m.search.push(r.search);
    }
    server.stop();
    deskMedians[count] = median(m.ready);
    deskRows.push([
      count.toLocaleString("en"), spread(m.ready), count === deskSizes[0] ? "1.00×" : `**${ratio(median(m.ready), deskMedians[deskSizes[0]])}**`,
      spread(m.appReady), spread(m.api, "KB"), spread(m.files, "KB"), spread(m.memory, "MB"), spread(m.search),
    ]);
  }
  {
    const m = { ready: [], appReady: [], files: [], memory: [] };
    for (let run = 0; run < (quick ? 1 : 9); run++) {
      const r = await coldDesk(appUrl, null);
      m.ready.push(r.ready), m.appReady.push(r.appReady), m.files.push(r.filesKb), m.memory.push(r.memory);
    }
    deskRows.push(["local demo, first visit", spread(m.ready), "", spread(m.appReady), "", spread(m.files, "KB"), spread(m.memory, "MB"), ""]);
  }
  table(["reviews on the server", "to the first rows (budget ≤ 300 ms at 100,000)", "÷ 100 reviews (budget ≤ 1.2×)", "to the app ready", "from the API (budget ≤ 50 KB)", "files before the first row (budget ≤ 150 KB)", "wasm memory", "search keystroke (budget ≤ 150 ms)"], deskRows);
}

// ---------------------------------------------------------------- 2c. phone link
if (wanted("2c")) {
  say("## 2c. A reviewer on a phone's link");
  say();
  say("Lighthouse's mobile link (1.6 Mbps down, 750 Kbps up, 150 ms round trip), emulated by Chromium for the tab (`bench/phone.mjs`), at 375 px. A returning reviewer: `countersign serve` (release build, SQLite, 100 reviews from the seed example) serving the desk, the connection saved (a reviewer key in the tab's storage); remembered on the phone: the key in the device's storage, as a paired phone keeps it, and the cookie the app then has the server set (`POST /api/v1/page-key`), so the server writes the first rows and the stylesheet into the page itself; signed in: the same desk with sign-in through an OpenID provider (oidc-provider, the sign-in tests' provider), the session's cookies taken from one sign-in, drawn the same way. A first visit: the release build on a static host (`scripts/serve-dist.mjs`, files sent as brotli), nothing stored. Cold: a fresh browser profile (an empty HTTP cache, as after an update of the app); warm: the same tab opens the inbox again. The first row drawn: on screen, as the browser reports it through the Element Timing API (the desk names the first row's title `inbox-row`), whoever drew it; the first row a person can open: on screen and its link working (mark `countersign:rows-open`: the first paint's links open their screen, the app opening it when it starts; else the app's inbox ready); what crossed the link by then (bodies as sent and headers; nothing for what came from the cache); and a tap on the first row at that moment until its review can be read (its heading on screen, whoever drew it: the server that serves the desk draws it, `GET /api/v1/reviews/{id}/page`, while the app loads) and until it can be decided (the app's review page, with its form). The floor: the same rows, as the server draws them, in a static page with the desk's stylesheet and nothing else (its first row on screen): what one page and its stylesheet cost on this link and machine.");
  say();
  {
    const phoneRows = [];
    const server = await seededServer(100);
    const runs = quick ? 1 : 5;
    // A reviewer signed in with OpenID Connect (the sign-in tests' provider, oidc-provider): the server
    // writes the first rows into the page itself. Their session's cookies are taken from one sign-in.
    const port = freePort();
    const provider = await startProvider("oidc-provider", `http://127.0.0.1:${port}/auth/callback`);
    const signedIn = await seededServer(100, { port, signIn: (dir) => signInSettings(dir, port, provider) });
    {
      const context = await browser.newContext();
      const p = await context.newPage();
      await signInAs(p, { url: signedIn.url, provider }, "dana");
      signedIn.cookies = await context.cookies();
      await context.close();
    }
    // A phone that remembers its key (as a paired one does): connected in Settings with "Remember on this device",
    // so the app has the server keep the key in the cookie it draws `/` with.
    const remembered = { url: server.url, key: server.key, remembered: true };
    {
      const context = await browser.newContext();
      const p = await context.newPage();
      await p.goto(`${server.url}/settings`);
      await p.getByLabel("Reviewer key").fill(server.key);
      await p.getByLabel("Remember on this device").check();
      await p.getByRole("button", { name: "Connect", exact: true }).click();
      const pageKey = async () => (await context.cookies()).filter((c) => c.name === "__Host-countersign_page_key");
      for (let waited = 0; (await pageKey()).length === 0; waited += 100) {
        if (waited > 10_000) throw new Error("the app did not have the server remember the key");
        await pause(100);
      }
      remembered.cookies = await pageKey();
      await context.close();
    }
    for (const [visit, origin, saved] of [
      ["returning reviewer, key for this tab, own server", server.url, { url: server.url, key: server.key }],
      ["returning reviewer, key remembered on the phone, own server", server.url, remembered],
      ["returning reviewer signed in, own server", signedIn.url, { cookies: signedIn.cookies }],
      ["first visit, static host", appUrl, null],
    ]) {
      const { cold, warm } = await phoneLink(browser, origin, saved, runs);
      for (const [cache, m] of [["cold", cold], ["warm", warm]]) {
        const by = [...new Set(m.map((v) => v.by))].join(", ");
        phoneRows.push([visit, cache, spread(m.map((v) => v.drawn), "ms", 0), spread(m.map((v) => v.openable), "ms", 0), spread(m.map((v) => v.kb), "KB"), by, spread(m.map((v) => v.read), "ms", 0), spread(m.map((v) => v.tap), "ms", 0)]);
      }
    }
    // The floor: the same drawn rows as a static page with the stylesheet, on a static host.
    const floorDir = "target/bench-phone-floor";
    rmSync(floorDir, { recursive: true, force: true });
    await writeFloor(floorDir, server);
    const floor = await floorPaints(browser, `${await serve(floorDir)}/`, runs);
    phoneRows.push(["floor: the same rows as a static page", "cold", spread(floor, "ms", 0), "", "", "", "", ""]);
    server.stop();
    signedIn.stop();
    provider.stop();
    table(["visit", "HTTP cache", "first row drawn (budget ≤ 500 ms)", "first row can be opened (budget ≤ 1,000 ms)", "over the link by then (budget ≤ 100 KB)", "opened by", "a tap then → its review to read", "→ to decide"], phoneRows);
  }
}

// ---------------------------------------------------------------- 3. layout
const layoutRows = [], plot = [];
const bp = wanted("3") || wanted("4") ? await (await browser.newContext()).newPage() : null;
if (bp) {
  await bp.goto(`${pageUrl}/index.html`);
  await bp.waitForFunction(() => document.getElementById("state").textContent === "ready", null, { timeout: 60000 });
}
if (wanted("3")) {
  say("## 3. Plan DAG layout: the domain crate in wasm beside dagre");
  say();
  say("Both lay out the same plans (phases of 40 steps: chains, fan-out/fan-in around a hub, sparse random dependencies on the 25 steps before, as in the criterion bench) in the same page, alternating, top to bottom, boxes 220×76 px with the app's gaps. dagre: `@dagrejs/dagre` 3.1.3 from npm, graph construction included as for ours. Our times under 1,000 steps are the mean of repeated layouts within each sample (2,000 ÷ steps of them), as the browser's clock counts in 0.1 ms steps. Crossings: proper intersections of the straight segments of every drawn edge, counted the same way for both. Draw: an SVG path of every edge segment until the next painted frame.");
  say();
  for (const [n, runs] of quick ? [[10, 2], [100, 2]] : [[10, 9], [100, 7], [1000, 5], [5000, 3]]) {
    const r = await bp.evaluate(([n, runs]) => window.bench.layout(n, runs), [n, runs]);
    plot.push({ n, ours: median(r.ours), dagre: median(r.dagre) });
    layoutRows.push([
      `${n} steps, ${r.edges} edges`, spread(r.ours, "ms", 3), spread(r.dagre, "ms", 1), `**${(median(r.dagre) / median(r.ours)).toFixed(1)}× faster**`,
      `${r.oursCrossings} / ${r.dagreCrossings}`, `${r.oursDraw.toFixed(1)} / ${r.dagreDraw.toFixed(1)} ms`,
    ]);
  }
  table(["plan", "ours (wasm)", "dagre (JS)", "ours vs dagre (target ≥ 10× at 1,000)", "crossings ours / dagre", "draw ours / dagre"], layoutRows);
  if (!quick) {
    say("![Layout time against plan size, ours and dagre's](bench/layout-time.svg)");
    say();
  }
}

// ---------------------------------------------------------------- 4. canonical
if (wanted("4")) {
  say("## 4. Canonical JSON (RFC 8785) + SHA-256 of a tool call, from its text");
  say();
  say("In the same page: the domain crate in wasm (`serde_json_canonicalizer` + `sha2`, the app's profile) beside `canonicalize` 5.1.0 from npm with WebCrypto's SHA-256 (`crypto.subtle.digest`), both from the JSON text (parse included). Both give the same hash on every input (checked each run).");
  say();
  const canonicalRows = [];
  for (const [bytes, runs] of quick ? [[1000, 2]] : [[1000, 15], [100_000, 9], [1_000_000, 5]]) {
    const r = await bp.evaluate(([b, runs]) => window.bench.canonical(b, runs), [bytes, runs]);
    if (!r.same) throw new Error(`the two canonical hashes of ${bytes} bytes differ`);
    canonicalRows.push([`${kb(r.bytes)} KB`, spread(r.wasm, "ms", 2), spread(r.javascript, "ms", 2), `**${ratio(median(r.wasm), median(r.javascript))}** (target ≤ 2×)`]);
  }
  let native = "";
  if (!quick) {
    const text = sh("cargo", ["bench", "-q", "-p", "countersign-domain", "--bench", "canonical", "--", "--noplot"], { stdio: ["ignore", "pipe", "ignore"] });
    const times = [...text.matchAll(/canonical_hash\/(\d+)\s+time:\s+\[\S+ \S+ (\S+) (\S+)/g)].map((m) => [Number(m[1]), `${m[2]} ${m[3]}`]);
    native = Object.fromEntries(times);
  }
  table(["call", "wasm (ours)", "JavaScript (npm + WebCrypto)", "wasm ÷ JS"], canonicalRows);
  if (native) {
    say(`Natively (criterion, \`cargo bench -p countersign-domain --bench canonical\`, median): ${Object.entries(native).map(([b, t]) => `${kb(Number(b))} KB ${t}`).join("; ")}.`);
    say();
  }
}
await browser.close();

// ---------------------------------------------------------------- 5. server
// Gives `run` the address of a fresh PostgreSQL (scripts/postgres.sh), stopped and removed after.
function onPostgres(run) {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-pg."));
  try {
    return run(sh("scripts/postgres.sh", ["start", dir]).trim());
  } finally {
    sh("scripts/postgres.sh", ["stop", dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}
// Its standard error says why a request failed.
const load = (extra) => sh(`${serverDir}/examples/load`, [...(quick ? ["--quick"] : []), ...extra], { stdio: ["ignore", "pipe", "inherit"] });
const pick = (text, label) => text.split("\n").find((l) => l.startsWith(label))?.slice(label.length).replace(/^[:,]\s*/, "") ?? "n/a";
const p99 = (cell) => cell.match(/(?:p99|99%) ([\d.]+ ?ms)/)?.[1] ?? "n/a";
const rate = (text, label) => Number(pick(text, label).match(/= (\d+)\/s|Requests\/sec: ([\d.]+)/)?.slice(1).find(Boolean) ?? NaN);
// The one-thread generator: wrk when installed, else hyper's client in the example.
const oneThread = (text) => (pick(text, "decisions, wrk") !== "n/a" ? "decisions, wrk 64 connections, closed loop" : "decisions, 64 connections on one thread (hyper), closed loop");
if (wanted("5")) {
  say("## 5. Server");
  say();
  say("`target/release/examples/load` (`crates/server/examples/load.rs`; the server in its own process, the load clients in the example's, on 127.0.0.1: 64 client threads, then 64 connections on one thread from Debian's `wrk` when installed, else from hyper's client). Decisions are durable (SQLite WAL with `synchronous=FULL`; PostgreSQL with `fsync=on`). The floor: a bare SQLite insert loop on the same disk and settings, one transaction per insert, run just before and just after the one-thread decisions (their mean: this disk's sync speed drifts by a third within minutes).");
  say();
  const serverRuns = [];
  for (let run = 0; run < (quick ? 1 : 2); run++) serverRuns.push(["SQLite", load([])]);
  if (!quick && existsSync("/usr/lib/postgresql")) serverRuns.push(["PostgreSQL", onPostgres((url) => load(["--database", url]))]);
  // A smoke run whose requests failed measured nothing, so it fails (a full run
  // shows the failures in its tables).
  if (quick) {
    for (const [backend, text] of serverRuns) {
      const failed = text.split("\n").filter((l) => / [1-9]\d* failed in |Non-2xx/.test(l));
      if (failed.length > 0) throw new Error(`${backend}: requests of the load example failed:\n${failed.join("\n")}`);
    }
  }
  table(["backend", "decisions, 64 client threads", "decisions, 64 connections on one thread (wrk or hyper)", "latency at 500/s", "list, first page", "server memory (resident, its own)", "bare insert floor", "decisions ÷ floor (budget ≥ 0.9)"], serverRuns.map(([backend, text]) => {
    const threads = rate(text, "decisions, 64 clients");
    const single = rate(text, oneThread(text));
    const best = Math.max(...[threads, single].filter(Number.isFinite));
    const floorRate = Number(pick(text, "bare SQLite insert loop").match(/(\d+)\/s/)?.[1]);
    return [
      backend,
      `${threads.toFixed(0)}/s (p99 ${p99(pick(text, "decisions, 64 clients, closed loop"))})`,
      Number.isFinite(single) ? `${single.toFixed(0)}/s (p99 ${p99(pick(text, oneThread(text)))})` : "n/a",
      `p50 ${pick(text, "decisions at 500/s, open loop").match(/p50 ([\d.]+ ?ms)/)?.[1]}, p99 ${p99(pick(text, "decisions at 500/s, open loop"))}`,
      `p99 ${p99(pick(text, "list over"))}`,
      pick(text, "memory").replace(/ \(the server process; (\d+) MB of it its own.*\)/, ", $1 MB its own"), Number.isFinite(floorRate) ? `${floorRate}/s` : "—", Number.isFinite(floorRate) ? `**${ratio(best, floorRate)}**` : "—",
    ];
  }));
  say("On 2 cores the load generator competes with the server for the CPU: 64 client threads spend much of it switching between threads (measured with perf), so the ratio uses the best of the two generators, and the one-thread generator is the closer stand-in for clients on other machines.");
  say();
  // What a decision costs the server, steadier than decisions/s: its CPU, and what it wrote to the disk (the log and
  // its checkpoints), over the one-thread runs; then the same decisions made in the order of their request times, as a
  // reviewer works through the inbox (the runs above decide reviews requested on 28 days in turn).
  for (const [backend, text] of serverRuns) {
    const costs = (how) => {
      const cpu = pick(text, `server CPU per decision${how}, one-thread run`).match(/^[\d.]+ µs/)?.[0];
      const bytes = pick(text, `server bytes written to storage per decision${how}, one-thread run`);
      return bytes === "n/a" ? `${cpu} of the server's CPU` : `${cpu} of the server's CPU and ${bytes} written to storage`;
    };
    if (pick(text, "server CPU per decision, one-thread run") === "n/a") continue;
    const inOrder = " in the inbox's order";
    const label = pick(text, `decisions${inOrder}, wrk`) !== "n/a" ? `decisions${inOrder}, wrk 64 connections, closed loop` : `decisions${inOrder}, 64 connections on one thread (hyper), closed loop`;
    const ordered = rate(text, label);
    const floorRate = Number(pick(text, "bare SQLite insert loop, around the decisions in the inbox's order").match(/(\d+)\/s/)?.[1]);
    const against = Number.isFinite(floorRate) ? ` against a floor of ${floorRate}/s (${ratio(ordered, floorRate)})` : "";
    say(`${backend}, the one-thread run: ${costs("")} per decision; decided in the inbox's order, ${ordered.toFixed(0)}/s${against} at ${costs(inOrder)} per decision.`);
  }
  say();
  for (const [backend, text] of serverRuns.slice(0, quick ? 1 : serverRuns.length)) {
    const list = text.split("\n").filter((l) => l.startsWith("list over") || l.startsWith("decisions at") || l.startsWith("flood"));
    say(`${backend}: ${list.join("; ")}.`);
    say();
  }

  // The inbox's questions over 1,000,000 reviews (`--list-only`: no decision runs).
  const million = [];
  if (!quick) {
    million.push(["SQLite", load(["--list", "1000000", "--list-only"])]);
    if (existsSync("/usr/lib/postgresql")) million.push(["PostgreSQL", onPostgres((url) => load(["--database", url, "--list", "1000000", "--list-only"]))]);
    say("The inbox's questions over 1,000,000 reviews (`load --list 1000000 --list-only`, 200 requests each, as the app asks them: `view=summary`, 50 rows; one review in 150 approved). Budget: text search p99 ≤ 20 ms.");
    say();
    const cases = ["first page", "pending, requester filter", "approved, soonest deadline first", "approved, newest first", "text search, a phrase 0.1 % hold", "text search, a phrase 1 holds", "text search, a phrase every review holds"];
    table(["backend", ...cases], million.map(([backend, text]) => [backend, ...cases.map((c) => {
      const line = pick(text, `list over 1000000 reviews, ${c}`);
      return `p50 ${line.match(/p50 ([\d.]+ ?ms)/)?.[1] ?? "n/a"}, p99 ${p99(line)}`;
    })]));
  }
}

// Several instances on one PostgreSQL database, with 1,000 live subscribers.
if (!quick && wanted("5b") && existsSync("/usr/lib/postgresql")) {
  sh("cargo", ["build", "-q", "--release", "-p", "countersign-server", "--bin", "countersign", "--example", "instances"]);
  const text = onPostgres((url) => sh("target/release/examples/instances", ["--database", url, "--seconds", "20"], { stdio: ["ignore", "pipe", "inherit"] }));
  say("## 5b. Several instances on one PostgreSQL database");
  say();
  say("`target/release/examples/instances` (`crates/server/examples/instances.rs`): three `countersign serve` processes on one database, 1,000 live event-stream subscribers spread over them, then 20 s of mixed load through all three (nine workers running plan lifecycles — submit, reject, resubmit, approve — and tool-call lifecycles — ask, approve, redeem — each step on another instance, and three listers), on this 2-core machine with the load clients. Database transactions are read from `pg_stat_database` (a statement outside a transaction counts as one).");
  say();
  for (const line of text.trim().split("\n")) say(`- ${line.trim()}`);
  say();
}

// ---------------------------------------------------------------- 5c. waiting agents
// A decision reaching its agent while many others wait; what each waiter costs.
if (wanted("5c")) {
  say("## 5c. A decision reaching its waiting agent in a crowd");
  say();
  const [crowd, decided] = quick ? [50, 5] : [1000, 200];
  say(`\`bench/waiting.mjs\` against \`${serverDir}/countersign serve --demo\` (SQLite): an agent asks for a tool call and long-polls its outcome (\`wait=30\`, as the SDKs do); a reviewer key approves it; the time runs from the decision's request leaving to the waiter's answer, one decision at a time, with nobody else waiting, with ${crowd} other agents waiting on other requests, then with ${crowd} event streams open as well (each told of every change). Each crowd runs in its own process at the lowest priority, standing in for agents and browsers on other machines (on 2 cores, at normal priority, its own reading would take the CPU the server needs). A change wakes only the agents waiting on its review, and is encoded once for every stream. Memory: the server's resident set before and after each crowd arrives. Budget: p99 ≤ 50 ms with the crowds.`);
  say();
  const lines = sh("node", ["bench/waiting.mjs", `${serverDir}/countersign`, String(crowd), String(decided)]).trim().split("\n");
  table(["case", "measured"], lines.map((line) => {
    const [what, figure] = line.split(": ");
    return [what, figure.startsWith("p50") ? figure.replace(/p99 ([\d.]+ ms)/, "p99 **$1**") : figure];
  }));
}

// ---------------------------------------------------------------- 6. SDKs
// What the agent SDKs add to a gated call beyond the server's own work.
if (wanted("6")) {
  if (existsSync(".venv-sdk/bin/python") && existsSync("sdk/typescript/dist/index.js")) {
    say("## 6. Agent SDKs: what each adds to a gated call");
    say();
    say("`bench/sdk.py` and `bench/sdk.mjs` against `target/release/countersign serve --demo`, each case interleaved run by run with the same requests made by hand (httpx in Python, fetch in Node): ask, a scripted reviewer approves, read the outcome, redeem, run; and the whole decorator / wrapper on a call a session grant approves at once. The SDK also canonicalizes and hashes the call and checks the Ed25519 receipt, which the raw requests do not. Budget: at most 2 ms per call in each language.");
    say();
    const dir = mkdtempSync(join(tmpdir(), "countersign-bench-sdk."));
    const port = freePort();
    const child = spawn(`${serverDir}/countersign`, ["serve", "--demo", "--listen", `127.0.0.1:${port}`, "--data", dir, "--agent-rate", "none", "--reviewer-rate", "none"], { stdio: ["ignore", "pipe", "ignore"] });
    started.push(child);
    let printed = "";
    child.stdout.on("data", (chunk) => (printed += chunk));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100 && !(printed.includes("Demo agent key") && (await fetch(`${url}/api/v1/health`).then((r) => r.ok, () => false))); i++) await pause(100);
    const keyOf = (label) => printed.split("\n").find((l) => l.startsWith(label))?.split(" ").at(-1);
    const publicKey = sh(`${serverDir}/countersign`, ["keys", "--data", dir, "signing-key"], { stdio: ["ignore", "pipe", "ignore"] }).trim();
    const args = [url, keyOf("Demo agent key"), keyOf("Demo reviewer key"), publicKey, String(quick ? 3 : 200)];
    const lines = [
      ...sh(".venv-sdk/bin/python", ["bench/sdk.py", ...args], { env: { ...process.env, PYTHONPATH: "sdk/python/src" } }).trim().split("\n"),
      ...sh("node", ["bench/sdk.mjs", ...args]).trim().split("\n"),
    ];
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
    table(["language, case", "raw HTTP", "SDK", "SDK adds"], lines.map((line) => {
      const [, what, raw, sdk, adds] = line.match(/^(.*): raw HTTP ([\d.]+ ms), SDK ([\d.]+ ms), SDK adds (-?[\d.]+ ms)/) ?? [];
      return [what ?? line, raw ?? "n/a", sdk ?? "n/a", adds ? `**${adds}**` : "n/a"];
    }));
  } else {
    say("## 6. Agent SDKs: what each adds to a gated call");
    say();
    say("Not measured in this run: it needs the Python SDK's environment (`scripts/setup.sh --sdk`) and the TypeScript SDK built (`cd sdk/typescript && npx tsc -p .`).");
    say();
  }
}

// ---------------------------------------------------------------- 6b. channels
// From a reviewer's click, in each channel, to the waiting agent resumed.
if (wanted("6b")) {
  say("## 6b. From a click to the agent resumed");
  say();
  if (existsSync(".venv-slack/bin/python") && existsSync(".venv-mail/bin/python") && existsSync("tests/node22/node_modules") && existsSync("sdk/typescript/dist/index.js")) {
    say(`\`bench/channels.mjs\` against \`${serverDir}/countersign serve\` with sign-in (the oidc-provider of \`tests/node22\`) and Slack's signing secret and mail (aiosmtpd): an agent asks through the TypeScript SDK and waits (\`request.wait()\`, the server's long poll); a reviewer approves through the API with a reviewer key, through the desk's request with a signed-in session, through the same request from the page an e-mail's link opened, or with a click in Slack (signed by slack-sdk, as the reviewer's linked account); the time runs from the decision's request leaving to \`wait()\` returning, one decision at a time.`);
    say();
    const lines = sh("node", ["bench/channels.mjs", `${serverDir}/countersign`, String(quick ? 3 : 200)]).trim().split("\n").filter((l) => l.includes("click to agent resumed"));
    table(["channel", "p50", "p99"], lines.map((line) => {
      const [, what, p50, p99] = line.match(/^(.*): click to agent resumed p50 ([\d.]+ ms), p99 ([\d.]+ ms)/) ?? [];
      return [what ?? line, p50 ?? "n/a", p99 ? `**${p99}**` : "n/a"];
    }));
  } else {
    say("Not measured in this run: it needs `.venv-slack`, `.venv-mail` and `tests/node22` (`scripts/setup.sh --slack --mail`) and the TypeScript SDK built.");
    say();
  }
}

// ---------------------------------------------------------------- 7. operating
if (wanted("7")) {
  say("## 7. Operating");
  say();
  say("What the operator's figures cost, and how fast a server is up. `load --observed`: durable decisions/s from 64 connections on one thread, against servers started with `--metrics` and the request log at `info` (written to a file), and against the same binary with metrics off and the log at `warn`, run after run in alternating order (12 runs of 3 s). Budget: on within 5 % of off. Start: `target/release/countersign serve` on an empty data folder (it makes the database, runs the migrations and makes the signing key) until `/api/v1/health` answers, polled every 2 ms; the median of 11 starts. Budget: 200 ms.");
  say();
  {
    const observed = load(["--observed"]).split("\n").find((l) => l.startsWith("decisions/s")) ?? "n/a";
    const starts = [];
    for (let i = 0; i < (quick ? 1 : 11); i++) {
      const dir = mkdtempSync(join(tmpdir(), "countersign-bench-start."));
      const port = freePort();
      const begun = performance.now();
      const child = spawn(`${serverDir}/countersign`, ["serve", "--listen", `127.0.0.1:${port}`, "--data", dir], { stdio: "ignore" });
      started.push(child);
      while (!(await fetch(`http://127.0.0.1:${port}/api/v1/health`).then((r) => r.ok, () => false))) await pause(2);
      starts.push(performance.now() - begun);
      // The binary carries the app (crates/server/build.rs; the smoke run by COUNTERSIGN_APP_DIR): served with no --app-dir, marked as a server's.
      const served = await fetch(`http://127.0.0.1:${port}/settings`).then((r) => r.text());
      if (!served.includes('<meta name="countersign-server"')) throw new Error(`${serverDir}/countersign does not carry the built app`);
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    }
    starts.sort((a, b) => a - b);
    const overhead = observed.match(/off (\d+)\/s, on (\d+)\/s \(median; ([+-][\d.]+%)\)/);
    table(["figure", "measured", "budget"], [
      ["decisions/s, metrics and request logs off → on", overhead ? `${overhead[1]}/s → ${overhead[2]}/s (**${overhead[3]}**)` : observed, "within 5 %"],
      ["start on an empty data folder to `/api/v1/health`", `**${starts[starts.length >> 1].toFixed(0)} ms** (median of ${starts.length}; ${starts[0].toFixed(0)}–${starts.at(-1).toFixed(0)} ms)`, "≤ 200 ms"],
    ]);
  }
}

// ---------------------------------------------------------------- 8. first run
// A fresh clone compiles everything again: full runs only.
if (!quick && wanted("8")) {
  say("## 8. A newcomer's first run");
  say();
  say("`./scripts/run.sh` from a fresh clone, with an empty `CARGO_HOME`, `CARGO_TARGET_DIR` and npm cache and nothing on `PATH` but the languages (cargo, rustc, rustup, node, python3) and the system's programs, until it prints the desk's address; then the same clone started again (`bench/first-run.mjs`). Budget: 12 minutes on 2 cores.");
  say();
  const printed = execFileSync(process.execPath, ["bench/first-run.mjs"], { encoding: "utf8" });
  for (const line of printed.split("\n").filter((l) => l.startsWith("|"))) say(line);
  say();
}

// ---------------------------------------------------------------- output
if (quick) {
  console.log("\n(--quick: smoke run, nothing written)");
} else if (only) {
  // The sections measured replace theirs in BENCHMARKS.md.
  const old = readFileSync("BENCHMARKS.md", "utf8").split("\n");
  const chunks = (lines) => {
    const found = new Map();
    let at = -1;
    lines.forEach((line, i) => {
      if (line.startsWith("## ")) {
        if (at >= 0) found.set(lines[at], [at, i]);
        at = i;
      }
    });
    if (at >= 0) found.set(lines[at], [at, lines.length]);
    return found;
  };
  const fresh = chunks(md), before = chunks(old);
  const missing = [...fresh.keys()].filter((h) => !before.has(h));
  if (missing.length > 0) throw new Error(`BENCHMARKS.md has no section ${missing.join(", ")} to replace: run every section once`);
  // From the last section backwards, so earlier positions still hold.
  for (const [heading, [from, to]] of [...before].sort((a, b) => b[1][0] - a[1][0])) {
    if (!fresh.has(heading)) continue;
    const [start, end] = fresh.get(heading);
    old.splice(from, to - from, ...md.slice(start, end));
  }
  // The lines at the top say which run measured each section.
  const provenance = /^(?:Produced|Sections? ([\w, ]+)) by `node bench\/run\.mjs` on (\d{4}-\d\d-\d\d): (.*)\.$/;
  const top = old.findIndex((line) => line.startsWith("## "));
  const measured = new Map();
  for (const line of old.slice(0, top)) {
    const [, named, date, where] = line.match(provenance) ?? [];
    if (date) for (const section of named?.split(", ") ?? sections) measured.set(section, `${date}: ${where}`);
  }
  for (const heading of fresh.keys()) measured.set(heading.slice(3, heading.indexOf(".")), `${today}: ${machine}; ${chromiumVersion} headless`);
  const runs = new Map();
  for (const section of sections) if (measured.has(section)) runs.set(measured.get(section), [...(runs.get(measured.get(section)) ?? []), section]);
  const lines = [...runs].sort(([a], [b]) => b.localeCompare(a)).map(([when, named]) => `Section${named.length > 1 ? "s" : ""} ${named.join(", ")} by \`node bench/run.mjs\` on ${when}.`);
  const first = old.findIndex((line) => provenance.test(line));
  const kept = old.slice(0, top).filter((line) => !provenance.test(line));
  kept.splice(first, 0, ...lines);
  old.splice(0, top, ...kept);
  // The reading guide at the end as it is now.
  const guide = old.indexOf("## Reading");
  if (guide >= 0 && existsSync("bench/reading.md")) old.splice(guide, old.length - guide, ...readFileSync("bench/reading.md", "utf8").split("\n"));
  writeFileSync("BENCHMARKS.md", old.join("\n"));
  if (wanted("3")) writeFileSync("bench/layout-time.svg", layoutPlot(plot));
  console.log(`\nwrote sections ${[...fresh.keys()].map((h) => h.slice(3, h.indexOf("."))).join(", ")} of BENCHMARKS.md`);
} else {
  writeFileSync("bench/layout-time.svg", layoutPlot(plot));
  const reading = existsSync("bench/reading.md") ? readFileSync("bench/reading.md", "utf8") : "";
  writeFileSync("BENCHMARKS.md", `${md.join("\n")}\n${reading}`);
  console.log("\nwrote BENCHMARKS.md and bench/layout-time.svg");
}
cleanup();
process.exit(0);
