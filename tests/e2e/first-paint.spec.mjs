// The first paint: the inbox's first page drawn before the app's code is
// fetched (the demo's on a first visit, written by a small module; on a return
// to the local inbox the page the app stored, or its stored head written by
// the module once that page's times moved on; a saved Countersign server's otherwise,
// written by the server when it serves the page, else by the module), then
// replaced by the app's own, element for element. Its links work before the
// app has arrived.
import { expect, test } from "@playwright/test";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, failOnScriptErrors, seedReviews, shoot, startServer, wcagViolations } from "./support.mjs";

failOnScriptErrors();

const APP_WASM = /\/countersign-app-[0-9a-f]+_bg\.wasm$/;
const PAINT_WASM = /\/first-paint-[0-9a-f]+_bg\.wasm$/;
const DEMO = /\/split_demo-[0-9a-f]+\.wasm$/;
const READING = /\/split_reading-[0-9a-f]+\.wasm$/;

/** Holds back every response for `pattern` until the returned function is called. */
async function holdBack(page, pattern) {
  let release;
  const released = new Promise((resolve) => (release = resolve));
  await page.route(pattern, async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

/**
 * The markup under `selector`, without the app's placeholder comments, the
 * page's blank lines and what hides the first paint's controls, and with each
 * time's exact instant left out: the demo's requests are dated relative to the
 * moment each drew them, apart by the time the app took to load.
 */
const markup = (page, selector) =>
  page.locator(selector).evaluate((el) =>
    el.innerHTML.replaceAll("<!---->", "").replaceAll(' inert=""', "").replaceAll(' aria-hidden="true"', "").replace(/<time datetime="[^"]*" title="[^"]*">/g, "<time>").trim());

/**
 * What a review's drawing and the app's review page draw alike, under `root`:
 * each of these parts' markup (null where it has none). A plan's steps are
 * buttons in the app only, and the app recomputes a call's hash itself.
 */
const reviewParts = (page, root) =>
  Promise.all([".review-head", ".tool-risk", ".exact-call", ".agent-summary", ".call-notes", ".tool-call > dl.fields", ".dag .edges", ".dag .nodes", ".dag .legend",
    "[aria-labelledby=problems-title]", "[aria-labelledby=history-title]"].map(async (part) =>
    (await page.locator(`${root} ${part}`).count())
      ? (await markup(page, `${root} ${part}`)).replaceAll(' tabindex="0" role="button"', ' role="group"').replace("recomputed in this browser", "recomputed by the server")
      : null));

/** The same, with the server link's state left out (the app's may already say Live). */
const servedMarkup = async (page, selector) =>
  (await markup(page, selector)).replace(/(<span class="link-state"[^>]*) data-state="[^"]*">[^<]*</, "$1><");

/** Saves a connection for the tab before any of the page's scripts run. */
const saveConnection = (page, connection) =>
  page.addInitScript((saved) => sessionStorage.setItem("countersign.v1.connection", JSON.stringify(saved)), connection);

/**
 * Where each row of the inbox on screen stands, at 1280 and at 375 px (rows below are laid out once scrolled to:
 * until then their height is the stylesheet's estimate).
 */
async function rowBoxes(page) {
  const boxes = {};
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    boxes[width] = await page.locator(".review-row").evaluateAll((rows) => rows.map((r) => {
      const { x, y, width, height } = r.getBoundingClientRect();
      return [x, y, width, height].map(Math.round);
    }).filter(([, y]) => y < innerHeight));
  }
  return boxes;
}

/**
 * In the page, from its first script: when the boot script asks for the app's code (its preload links), in
 * `window.appAskedAt`, and `window.firstRowOnScreen()`: when the inbox's first row was on screen, as the browser
 * reports it (the Element Timing name the desk gives it).
 */
const appAskedFor = () => {
  new MutationObserver((_, observer) => {
    if (!document.querySelector('link[href*="/countersign-app-"]')) return;
    window.appAskedAt = performance.now();
    observer.disconnect();
  }).observe(document, { subtree: true, childList: true });
  window.firstRowOnScreen = () => new Promise((resolve) => new PerformanceObserver((list) => {
    const row = list.getEntries().find((e) => e.identifier === "inbox-row");
    if (row) resolve(row.renderTime);
  }).observe({ type: "element", buffered: true }));
};

/**
 * The local desk's inbox drawn by the first paint while the app's code is held back, then by the app, element for
 * element, its rows where they stood. `held` is held back too (the code that would add to the rows: the app then
 * lists the rows the first paint drew); `open` loads the page; `module` says how often the first paint's module is
 * fetched (never when the page the app stored is drawn); `shot` names its screenshots.
 */
async function drawnLocallyBeforeTheApp(page, { open, held, shot, module = 1 }) {
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  const releaseApp = await holdBack(page, APP_WASM);
  const releaseHeld = await holdBack(page, held);
  await page.addInitScript(appAskedFor);
  await open();
  const painted = page.locator(".first-paint");
  await expect(painted.locator(".review-row")).toHaveCount(7);
  await expect.poll(() => page.evaluate(() => window.appAskedAt), "the app's code is asked for").toBeGreaterThan(0);
  const [onScreen, asked] = await page.evaluate(async () => [await firstRowOnScreen(), window.appAskedAt]);
  expect(asked, "the app's code is asked for once the first row is on screen, not before").toBeGreaterThanOrEqual(onScreen);
  await expect(painted).toContainText("Database Migration Plan");
  expect(await painted.evaluate((el) => el.inert), "its links can be followed").toBe(false);
  expect(await painted.locator("button, input, select").evaluateAll((controls) => controls.every((c) => c.closest("[inert][aria-hidden=true]"))),
    "its tabs, filters and buttons are the app's: a picture until then, hidden from assistive technology").toBe(true);
  expect(await page.evaluate(() => ["countersign:first-row", "countersign:rows-open"].map((m) => performance.getEntriesByName(m).length)),
    "the first row is marked, and its rows open").toEqual([1, 1]);
  expect(fetched.filter((p) => PAINT_WASM.test(p)), "the first paint's module").toHaveLength(module);
  const paintMarkup = await markup(page, ".first-paint");
  const paintBoxes = await rowBoxes(page);
  if (shot) await shoot(page, shot, { drawing: true });

  releaseApp();
  await expect(painted).toHaveCount(0);
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  expect(await markup(page, "body"), "the app draws the same elements, classes and text").toBe(paintMarkup);
  expect(await rowBoxes(page), "the rows stand where they stood, at 1280 and 375 px").toEqual(paintBoxes);
  releaseHeld();
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem").nth(5)).toContainText("1 problem");
}

test("a first visit draws the inbox before the app's code arrives, as the app then draws it", async ({ page }) => {
  // The demo's own code is held: it would store the reviews, which the app would then read.
  await drawnLocallyBeforeTheApp(page, { open: () => page.goto("/"), held: DEMO, shot: "first-paint" });
});

/** Taps a row of the local desk's first paint before the app's code arrives; the app opens its review once it starts. */
async function tappedBeforeTheApp(page, open) {
  const releaseApp = await holdBack(page, APP_WASM);
  await open();
  const link = page.locator(".first-paint .review-link").filter({ hasText: "Database Migration Plan" });
  await link.click();
  await expect(link).toHaveAttribute("aria-busy", "true");
  releaseApp();
  await expect(page.getByRole("heading", { level: 1, name: "Database Migration Plan" })).toBeVisible();
  await expect(page.locator(".first-paint")).toHaveCount(0);
}

test("a first visit: a row tapped before the app's code arrives opens the demo's review once it starts", async ({ page }) => {
  await tappedBeforeTheApp(page, () => page.goto("/"));
});

const DRAWING = "countersign.v1.inbox-drawing";
/** The stored drawing of the inbox's head, parsed. */
const storedDrawing = (page) => page.evaluate((key) => JSON.parse(localStorage.getItem(key)), DRAWING);

/**
 * Visits the local desk once, until the app has stored the demo and the inbox's head beside its index, and the head's
 * drawing, whose times ("asked 3 minutes ago") hold for some seconds more: the demo's requests are dated from the
 * visit, so one may be about to be said otherwise; then it waits for that and visits again.
 */
async function returning(page) {
  await page.goto("/");
  for (let visit = 0; ; visit++) {
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
    await expect.poll(() => page.evaluate(() => localStorage.getItem("countersign.v1.inbox-head")), "the head is stored").not.toBeNull();
    await expect.poll(async () => (await storedDrawing(page))?.until, "its drawing is stored").toBeGreaterThan(Date.now());
    const left = (await storedDrawing(page)).until - Date.now();
    if (left > 10_000 || visit === 2) return;
    await page.waitForTimeout(left + 100);
    await page.reload();
  }
}

test("a return to the local inbox draws the page the app stored, with no code fetched first, as the app then draws it", async ({ page }) => {
  await returning(page);
  const drawing = await storedDrawing(page);
  expect(drawing.base).toBe("/");
  expect(drawing.build, "the build's name, as the page's meta says it").toBe(await page.locator('meta[name="countersign-build"]').getAttribute("content"));
  // The code that reads every stored review is held: it would mark the review that fails validation.
  await drawnLocallyBeforeTheApp(page, { open: () => page.reload(), held: READING, shot: "first-paint-local", module: 0 });
});

test("a stored drawing whose times moved on, or another build's, is not drawn: the head is, as of now", async ({ page }) => {
  await returning(page);
  // Its times no longer hold (crates/markup's tests check the instant each time is said otherwise).
  const stored = await storedDrawing(page);
  const store = (drawing) => page.evaluate(([key, drawing]) => localStorage.setItem(key, JSON.stringify(drawing)), [DRAWING, drawing]);
  await store({ ...stored, until: Date.now() - 1 });
  await drawnLocallyBeforeTheApp(page, { open: () => page.reload(), held: READING });
  await expect.poll(async () => (await storedDrawing(page)).until, "written anew once the reviews are read").toBeGreaterThan(Date.now());

  await store({ ...(await storedDrawing(page)), build: "another-build", html: "<p>another build's drawing</p>" });
  await page.unrouteAll();
  await drawnLocallyBeforeTheApp(page, { open: () => page.reload(), held: READING });
  await expect(page.getByText("another build's drawing")).toHaveCount(0);
  await expect.poll(async () => (await storedDrawing(page)).build, "written anew for this build").toBe(stored.build);
});

test("a return to the local inbox: a row tapped before the app's code arrives opens its stored review once it starts", async ({ page }) => {
  await returning(page);
  await tappedBeforeTheApp(page, () => page.reload());
});

test("a damaged stored head and drawing, and a saved LangGraph connection, get no first paint", async ({ page }) => {
  await returning(page);
  await page.evaluate((drawing) => {
    localStorage.setItem("countersign.v1.inbox-head", "{\"counts\":");
    localStorage.setItem(drawing, "{\"build\":");
  }, DRAWING);
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  await page.reload();
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  expect(fetched.filter((p) => PAINT_WASM.test(p)), "the module is fetched for the head").toHaveLength(1);
  expect(await page.evaluate(() => performance.getEntriesByName("countersign:first-row").length), "nothing is drawn").toBe(0);

  const other = await page.context().browser().newContext();
  const tab = await other.newPage();
  const asked = [];
  tab.on("request", (r) => asked.push(new URL(r.url()).pathname));
  await saveConnection(tab, { url: "http://127.0.0.1:9", key: "", backend: "langgraph" });
  await tab.goto("/");
  await expect(tab.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  expect(asked.filter((p) => PAINT_WASM.test(p)), "a LangGraph connection").toEqual([]);
  await other.close();
});

test.describe("with a Countersign server connection saved", () => {
  let dataDir;
  let server;
  let keys;
  test.beforeAll(async ({}, testInfo) => {
    dataDir = mkdtempSync(join(tmpdir(), "countersign-e2e-"));
    // About three in four of the seeded reviews are pending: more than a page.
    keys = seedReviews(dataDir, 120);
    // The desk on the static host (another origin) may call it too.
    const desk = new URL(testInfo.project.use.baseURL).origin;
    server = await startServer(dataDir, "127.0.0.1:0", { demo: false, extra: ["--cors-origin", desk] });
  });
  test.afterAll(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /**
   * Opens the desk at `origin` with the server's connection saved, the app's
   * code held back: the server's first page is drawn, asked with `asked`
   * (and the first paint's module fetched or not: `module`), then replaced by
   * the app's own, element for element.
   */
  async function drawnBeforeTheApp(page, origin, { asked, module, shot }) {
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    await saveConnection(page, { url: `${server.url}/`, key: keys.reviewer, backend: "countersign" });
    const releaseApp = await holdBack(page, APP_WASM);
    // The requester filter's full list is held too: until it comes, both list the page's requesters.
    const releaseRequesters = await holdBack(page, "**/api/v1/requesters");
    await page.goto(`${origin}/`);
    const painted = page.locator(".first-paint");
    await expect(painted.locator(".review-row")).toHaveCount(50);
    const { body } = await api(server, keys.reviewer, "GET", "/reviews?view=summary&status=pending&limit=1");
    await expect(painted.locator(".pager")).toContainText(`1–50 of ${body.counts.pending}`);
    await expect(painted.getByText("Connecting…")).toHaveAttribute("title", server.url);
    expect(await page.evaluate(() => ["countersign:first-row", "countersign:rows-open"].map((m) => performance.getEntriesByName(m).length)))
      .toEqual([1, 1]);
    expect(fetched.filter((p) => p === asked), "one page asked before the app").toHaveLength(1);
    expect(fetched.filter((p) => PAINT_WASM.test(p)), "the first paint's module").toHaveLength(module ? 1 : 0);
    await expect.poll(() => fetched.findIndex((p) => APP_WASM.test(p)), "the app's code is fetched after the page is asked")
      .toBeGreaterThan(fetched.indexOf(asked));
    const paintMarkup = await servedMarkup(page, ".first-paint");
    const paintBoxes = await rowBoxes(page);
    await shoot(page, shot, { drawing: true });

    releaseApp();
    await expect(painted).toHaveCount(0);
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(50);
    expect(await page.evaluate(() => document.body.classList.contains("painting")), "the app's own nodes are shown").toBe(false);
    expect(await servedMarkup(page, "body"), "the app draws the same elements, classes and text").toBe(paintMarkup);
    expect(await rowBoxes(page), "the rows stand where they stood, at 1280 and 375 px").toEqual(paintBoxes);
    releaseRequesters();
    await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  }

  test("a server that serves the desk draws its first page itself before the app's code arrives, as the app then draws it", async ({ page }) => {
    await drawnBeforeTheApp(page, server.url, { asked: "/api/v1/inbox", module: false, shot: "first-paint-server" });
  });

  test("a server on another origin: its answer is drawn by the first paint's module, as the app then draws it", async ({ page, baseURL }) => {
    await drawnBeforeTheApp(page, baseURL, { asked: "/api/v1/reviews", module: true, shot: "first-paint-other-origin" });
  });

  test("a key remembered on this device has its first page drawn into the page itself; a tab's key, another connection and a disconnected desk get the page as built", async ({ page, context }) => {
    const pageKey = async () => (await context.cookies(server.url)).find((c) => c.name === "__Host-countersign_page_key");
    const connect = async (remember) => {
      await page.goto(`${server.url}/settings`);
      await page.getByLabel("Reviewer key").fill(keys.reviewer);
      await page.getByLabel("Remember on this device").setChecked(remember);
      await page.getByRole("button", { name: "Connect", exact: true }).click();
      await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
    };
    await connect(true);
    await expect.poll(pageKey, "the app asks the server to remember the key for the page").toMatchObject({
      value: keys.reviewer, httpOnly: true, secure: true, sameSite: "Strict", path: "/",
    });

    // Settings' own requests end with it: only the next page's are counted.
    await page.goto("about:blank");
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    const releaseApp = await holdBack(page, APP_WASM);
    const served = await page.goto(`${server.url}/`);
    expect(served.headers()["cache-control"]).toBe("private, no-store");
    expect(await served.text(), "the rows come with the page").toContain('<div class="first-paint"');
    const links = page.locator(".first-paint .review-link");
    await expect(links).toHaveCount(50);
    expect(fetched.filter((p) => p.startsWith("/api/")), "nothing asked before the rows").toEqual([]);
    expect(fetched.filter((p) => PAINT_WASM.test(p)), "no first paint module").toEqual([]);
    await shoot(page, "first-paint-remembered-key", { drawing: true });
    await links.first().click();
    await expect(links.first()).toHaveAttribute("aria-busy", "true");
    await page.goBack();
    releaseApp();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(50);
    await page.unrouteAll();

    // A review's own address (a link from Slack or an e-mail) comes drawn with the page too.
    const [row] = (await api(server, keys.reviewer, "GET", "/reviews?view=summary&status=pending&limit=1")).body.items;
    // The inbox's own requests end with it: only the next page's are counted.
    await page.goto("about:blank");
    fetched.length = 0;
    const releaseReview = await holdBack(page, APP_WASM);
    const opened = await page.goto(`${server.url}/reviews/${row.id}`);
    expect(opened.headers()["cache-control"]).toBe("private, no-store");
    expect(await opened.text()).toContain(`<div class="first-paint" data-review="${row.id}">`);
    await expect(page.locator(".first-paint").getByRole("heading", { level: 1, name: row.title })).toBeVisible();
    expect(fetched.filter((p) => p.startsWith("/api/")), "nothing asked before the review").toEqual([]);
    releaseReview();
    await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    await page.unrouteAll();

    // Another connection for this tab: the server's drawing is not this tab's inbox, nor its review.
    await page.evaluate(() => sessionStorage.setItem("countersign.v1.connection",
      JSON.stringify({ url: "http://127.0.0.1:9", key: "", backend: "langgraph" })));
    await holdBack(page, APP_WASM);
    const stale = await page.goto(`${server.url}/`);
    expect(await stale.text()).toContain('<div class="first-paint"');
    await expect(page.locator(".first-paint")).toHaveCount(0);
    expect(await page.evaluate(() => document.body.classList.contains("painting"))).toBe(false);
    const staleReview = await page.goto(`${server.url}/reviews/${row.id}`);
    expect(await staleReview.text()).toContain(`data-review="${row.id}"`);
    await expect(page.locator(".first-paint")).toHaveCount(0);
    expect(await page.evaluate(() => document.body.classList.contains("painting"))).toBe(false);
    // Unrouting lets the held app start: by then this tab's other connection is gone, and so is the page.
    await page.evaluate(() => sessionStorage.clear());
    await page.goto("about:blank");
    await page.unrouteAll();

    // Disconnecting forgets it; a key kept for this tab only is never remembered.
    await page.goto(`${server.url}/settings`);
    // Disconnecting reloads the app once the server has answered: a navigation before then is cut short.
    const reloaded = page.waitForEvent("load");
    await page.getByRole("button", { name: "Disconnect: use this browser's storage" }).click();
    await reloaded;
    await expect.poll(pageKey, "disconnecting clears the cookie").toBeUndefined();
    await connect(false);
    expect(await pageKey(), "a tab's key").toBeUndefined();
    const plain = await page.goto(`${server.url}/`);
    expect(await plain.text()).not.toContain('<div class="first-paint"');
  });

  test("a row tapped before the app's code arrives opens its review once the app starts; going back takes the tap back", async ({ page }) => {
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    const releaseApp = await holdBack(page, APP_WASM);
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(`${server.url}/`);
    const links = page.locator(".first-paint .review-link");
    await expect(links).toHaveCount(50);
    await links.first().click();
    await expect(page).toHaveURL(`${server.url}${await links.first().getAttribute("href")}`);
    await expect(links.first()).toHaveAttribute("aria-busy", "true");
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}/`);
    await expect(links.first()).not.toHaveAttribute("aria-busy", "true");
    const third = links.nth(2);
    const title = await third.locator(".review-title").textContent();
    await third.focus();
    await page.keyboard.press("Enter");
    await expect(third).toHaveAttribute("aria-busy", "true");
    await expect(page).toHaveURL(`${server.url}${await third.getAttribute("href")}`);
    await expect.poll(() => fetched.filter((p) => /\/split_review-[0-9a-f]+\.wasm$/.test(p)).length, "the review's code is fetched at once").toBe(1);
    // The server draws the review meanwhile, to be read: nothing in it decides.
    const drawn = page.locator(".first-paint[data-review]");
    await expect(drawn.getByRole("heading", { level: 1, name: title })).toBeVisible();
    await expect(page.locator(".first-paint:not([data-review])")).toBeHidden();
    await expect(drawn.locator("main button, main form, main textarea")).toHaveCount(0);
    await expect(drawn.getByRole("status")).toContainText(["The decision form is loading…"]);
    const drawnParts = await reviewParts(page, ".first-paint[data-review]");
    expect(drawnParts[0] && drawnParts[7] && drawnParts[10], "the drawing has a head, a plan's graph and a history").toBeTruthy();
    await shoot(page, "first-paint-review", { drawing: true });
    // Another screen's link leaves the review drawn, its link busy, until the app opens that screen.
    await drawn.getByRole("link", { name: "Settings" }).click();
    await expect(page).toHaveURL(`${server.url}/settings`);
    await expect(drawn.getByRole("link", { name: "Settings" })).toHaveAttribute("aria-busy", "true");
    await expect(page.locator(".first-paint:not([data-review])")).toBeHidden();
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}${await third.getAttribute("href")}`);
    await expect(drawn.getByRole("heading", { level: 1, name: title })).toBeVisible();

    releaseApp();
    await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    expect(await page.evaluate(() => document.body.classList.contains("painting"))).toBe(false);
    await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
    expect(await reviewParts(page, "main"), "the app draws the review's head, plan graph, problems and history as the server drew them").toEqual(drawnParts);
  });

  test("a review's own address opened before the app's code arrives is drawn by the server, then by the app", async ({ page }) => {
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    const { body } = await api(server, keys.reviewer, "GET", "/reviews?view=summary&status=pending&limit=1");
    const [{ id, title }] = body.items;
    const releaseApp = await holdBack(page, APP_WASM);
    const fetched = [];
    page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
    await page.goto(`${server.url}/reviews/${id}`);
    const drawn = page.locator(`.first-paint[data-review="${id}"]`);
    await expect(drawn.getByRole("heading", { level: 1, name: title })).toBeVisible();
    await expect.poll(() => fetched.findIndex((p) => /\/split_review-[0-9a-f]+\.wasm$/.test(p)), "the review's code is asked after its drawing")
      .toBeGreaterThan(fetched.indexOf(`/api/v1/reviews/${id}/page`));
    expect(fetched.indexOf(`/api/v1/reviews/${id}/page`)).toBeGreaterThanOrEqual(0);
    await expect(drawn.getByText("The decision form is loading…")).toBeVisible();
    expect(await wcagViolations(page), "the drawn review meets WCAG 2.1 AA").toEqual([]);
    // Its links work before the app too: the address changes and the app opens that screen when it starts.
    const inbox = drawn.getByRole("link", { name: "← Inbox" });
    await inbox.click();
    await expect(page).toHaveURL(`${server.url}/`);
    await expect(inbox).toHaveAttribute("aria-busy", "true");
    await page.goBack();
    await expect(page).toHaveURL(`${server.url}/reviews/${id}`);
    await expect(drawn.getByRole("link", { name: "← Inbox" })).not.toHaveAttribute("aria-busy", "true");
    await expect(drawn.getByRole("heading", { level: 1, name: title })).toBeVisible();

    releaseApp();
    await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
  });

  test("a decided tool call drawn by the server says what the app then says: the summary's check, the history", async ({ page }) => {
    const asked = await api(server, keys.agent, "POST", "/tool-calls", {
      requestedByRole: "payments-agent", sessionId: "s1", runId: "r1",
      toolCall: { name: "payments.refund", args: { order: "A-1001", amount: 4200 } },
      humanSummary: "Refund order A-1001",
      riskTier: "R3",
      riskReasons: ["moves money"],
      sideEffects: ["The customer is refunded"],
      workspace: "shop",
    });
    expect(asked.status).toBe(201);
    const id = asked.body.outcome.confirm_id;
    const rejected = await api(server, keys.reviewer, "POST", `/reviews/${id}/decisions`,
      { status: "rejected", decided_by_role: "reviewer", reason: "Refunds go through support" }, { "Idempotency-Key": `reject-${id}` });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    const releaseApp = await holdBack(page, APP_WASM);
    await page.goto(`${server.url}/reviews/${id}`);
    const root = `.first-paint[data-review="${id}"]`;
    await expect(page.locator(`${root} .summary-note`)).toContainText("amount");
    await expect(page.locator(`${root} .timeline-reason`)).toHaveText("Refunds go through support");
    const drawnParts = await reviewParts(page, root);
    expect(drawnParts.slice(1, 6).every(Boolean), "the drawing has the call's risk, exact call, summary, notes and fields").toBe(true);
    await expect(page.locator(`${root} .call-notes`)).toContainText("The customer is refunded");

    releaseApp();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    await expect(page.locator("main .decided")).toContainText("rejected");
    expect(await reviewParts(page, "main"), "the app draws the review's head, call, summary and history as the server drew them").toEqual(drawnParts);
  });

  test("a review the server cannot find is not drawn, and the app says so", async ({ page }) => {
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    await page.goto(`${server.url}/reviews/00000000-0000-4000-8000-000000000000`);
    await expect(page.getByRole("heading", { level: 1, name: "No such review" })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    // Asked by the boot script and by the app: both answered 404, as the browser logs.
    expect(page.errors).toEqual(Array(2).fill("Failed to load resource: the server responded with a status of 404 (Not Found)"));
    page.errors.length = 0;
  });

  test("a row tapped once the app has started, while its own rows are on their way, is opened by the app", async ({ page }) => {
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    // The app's own question for the inbox's rows is held: the drawing stands meanwhile.
    const releaseRows = await holdBack(page, "**/api/v1/reviews?view=summary**");
    await page.goto(`${server.url}/`);
    const link = page.locator(".first-paint .review-link").nth(1);
    const title = await link.locator(".review-title").textContent();
    // Tapped as soon as the app has started: the drawing gives way two seconds after that at most.
    await page.waitForFunction(() => performance.getEntriesByName("countersign:start").length === 1, null, { polling: "raf" });
    await link.click();
    await expect(page.getByRole("heading", { level: 1, name: title })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    releaseRows();
  });

  test("a slow server does not hold the app back, and its late answer is not drawn over the app", async ({ page }) => {
    await saveConnection(page, { url: server.url, key: keys.reviewer, backend: "countersign" });
    let first = true;
    let answered;
    const late = new Promise((resolve) => (answered = resolve));
    await page.route("**/api/v1/inbox?**", async (route) => {
      if (!first) return route.continue();
      first = false;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      await route.continue();
      answered();
    });
    await page.goto(`${server.url}/`);
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(50);
    await late;
    await page.waitForTimeout(200);
    await expect(page.locator(".first-paint")).toHaveCount(0);
    expect(await page.evaluate(() => performance.getEntriesByName("countersign:first-row").length), "nothing drawn late").toBe(0);
    await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(50);
  });

  test("a server that cannot be reached draws nothing, and the app says so", async ({ page }) => {
    // A port that was free a moment ago: nothing listens there.
    const closed = createServer().listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address();
    await new Promise((resolve) => closed.close(resolve));
    await saveConnection(page, { url: `http://127.0.0.1:${port}`, key: keys.reviewer, backend: "countersign" });
    await page.goto(`${server.url}/`);
    await expect(page.getByText("The server cannot be reached", { exact: true })).toBeVisible();
    await expect(page.locator(".first-paint")).toHaveCount(0);
    expect(await page.evaluate(() => performance.getEntriesByName("countersign:first-row").length)).toBe(0);
    const unexpected = page.errors.filter((e) => !/ERR_CONNECTION_REFUSED/.test(e));
    expect(unexpected).toEqual([]);
    page.errors.length = 0;
  });
});

test("a first paint that cannot be fetched leaves the inbox to the app", async ({ page }) => {
  await page.route(PAINT_WASM, (route) => route.abort("internetdisconnected"));
  await page.goto("/");
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  await expect(page.locator(".first-paint")).toHaveCount(0);
  const unexpected = page.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED/.test(e));
  expect(unexpected).toEqual([]);
  page.errors.length = 0;
});

test("an app that cannot be fetched after the first paint says so instead of standing as an inbox", async ({ page }) => {
  await page.route(APP_WASM, (route) => route.abort("internetdisconnected"));
  await page.goto("/");
  const alert = page.getByRole("alert");
  await expect(alert).toContainText("Countersign could not be loaded");
  await expect(alert).toContainText("nothing was decided");
  await expect(page.locator(".first-paint")).toHaveCount(0);
  await shoot(page, "app-load-failed");
  const unexpected = page.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|Failed to fetch/.test(e));
  expect(unexpected).toEqual([]);
  page.errors.length = 0;
});
