// The first paint (crates/first-paint): a first visit's inbox drawn by a small
// module before the app's code is fetched, then replaced by the app's own in
// the same frame, element for element.
import { expect, test } from "@playwright/test";
import { failOnScriptErrors, shoot } from "./support.mjs";

failOnScriptErrors();

const APP_WASM = /\/countersign-app-[0-9a-f]+_bg\.wasm$/;
const PAINT_WASM = /\/first-paint-[0-9a-f]+_bg\.wasm$/;
const DEMO = /\/split_demo-[0-9a-f]+\.wasm$/;

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
 * The markup under `selector`, without the app's placeholder comments and the
 * page's blank lines, and with each time's exact instant left out: the demo's
 * requests are dated relative to the moment each drew them, apart by the time
 * the app took to load.
 */
const markup = (page, selector) =>
  page.locator(selector).evaluate((el) =>
    el.innerHTML.replaceAll("<!---->", "").replace(/<time datetime="[^"]*" title="[^"]*">/g, "<time>").trim());

/** Where each row of the inbox stands, at the current width. */
const rowBoxes = (page) =>
  page.locator(".review-row").evaluateAll((rows) => rows.map((r) => {
    const { x, y, width, height } = r.getBoundingClientRect();
    return [x, y, width, height].map(Math.round);
  }));

test("a first visit draws the inbox before the app's code arrives, as the app then draws it", async ({ page }) => {
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  const releaseApp = await holdBack(page, APP_WASM);
  // The demo's own code is held too: the app then lists the rows the first paint drew.
  const releaseDemo = await holdBack(page, DEMO);
  await page.goto("/");
  const painted = page.locator(".first-paint");
  await expect(painted.locator(".review-row")).toHaveCount(7);
  await expect(painted).toContainText("Database Migration Plan");
  expect(await painted.getAttribute("aria-hidden"), "a picture of the inbox, hidden from assistive technology").toBe("true");
  expect(await painted.evaluate((el) => el.inert), "nothing in it can be clicked or focused").toBe(true);
  const firstRow = await page.evaluate(() => performance.getEntriesByName("countersign:first-row").length);
  expect(firstRow, "the first row is marked").toBe(1);
  const before = fetched.filter((p) => p.endsWith(".wasm"));
  expect(before.filter((p) => PAINT_WASM.test(p)), "the first paint's module").toHaveLength(1);
  const paintMarkup = await markup(page, ".first-paint");
  const paintBoxes = {};
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    paintBoxes[width] = await rowBoxes(page);
  }
  await shoot(page, "first-paint");

  releaseApp();
  await expect(painted).toHaveCount(0);
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  expect(await markup(page, "body"), "the app draws the same elements, classes and text").toBe(paintMarkup);
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await rowBoxes(page), `the rows stand where they stood, at ${width} px`).toEqual(paintBoxes[width]);
  }
  releaseDemo();
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem").nth(1)).toContainText("1 problem");
});

test("a returning reviewer and a saved server connection get no first paint", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  await expect.poll(() => page.evaluate(() => localStorage.getItem("countersign.v1.seeded"))).not.toBeNull();
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  await page.reload();
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem")).toHaveCount(7);
  expect(fetched.filter((p) => PAINT_WASM.test(p)), "a returning reviewer").toEqual([]);
  expect(await page.evaluate(() => performance.getEntriesByName("countersign:first-row").length)).toBe(0);

  // An empty browser with a connection saved for this tab lists the server's reviews, not the demo's.
  const other = await page.context().browser().newContext();
  const tab = await other.newPage();
  const asked = [];
  tab.on("request", (r) => asked.push(new URL(r.url()).pathname));
  await tab.addInitScript(() =>
    sessionStorage.setItem("countersign.v1.connection", JSON.stringify({ url: "http://127.0.0.1:9", key: "cs_reviewer_x", backend: "countersign" })));
  await tab.goto("/");
  await expect(tab.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  expect(asked.filter((p) => PAINT_WASM.test(p)), "a saved connection").toEqual([]);
  await other.close();
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
