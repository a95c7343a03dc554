// The desk on a real `countersign serve` holding 10,000 reviews (the server's
// `seed` example): the inbox asks the server for one page of summaries at a
// time, and changes made through the API patch what is shown without asking
// for the list again. The server and the seed are the debug binaries the
// server tests built.
import { expect, test } from "@playwright/test";
import { api, failOnScriptErrors, newPlanReview, seedReviews, shoot, startServer, wcagViolations } from "./support.mjs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REVIEWS = 10_000;
const rows = (page) => page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");
const pager = (page) => page.getByRole("navigation", { name: "Pages" });
const titles = (page) => page.locator(".review-row .review-title").allTextContents();

// Checked before the server stops (its end cuts the open event stream).
failOnScriptErrors();

let dataDir;
let server;
let keys;
let counts;
test.beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-scale-"));
  keys = seedReviews(dataDir, REVIEWS);
});
test.afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
test.beforeEach(async ({ context }) => {
  server = await startServer(dataDir, "127.0.0.1:0", { demo: false });
  counts = (await api(server, keys.reviewer, "GET", "/reviews?view=summary&limit=1")).body.counts;
  await context.addInitScript(([url, key]) => {
    sessionStorage.setItem("countersign.v1.connection", JSON.stringify({ url, key, backend: "countersign" }));
  }, [server.url, keys.reviewer]);
});
test.afterEach(() => server.stop());

/** Every API request the page makes from now on. */
function recordApi(page) {
  const asked = [];
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/v1/")) asked.push(url);
  });
  return asked;
}
const listRequests = (asked) => asked.filter((u) => u.pathname === "/api/v1/reviews");

test("the inbox pages through 10,000 reviews a page at a time, forward and back", async ({ page }) => {
  const asked = recordApi(page);
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(50);
  await expect(pager(page)).toContainText(`1–50 of ${counts.pending}`);
  await expect(page.getByRole("link", { name: /^Inbox/ })).toContainText(String(counts.pending));
  const first = await titles(page);
  await pager(page).getByRole("button", { name: "Next" }).click();
  await expect(pager(page)).toContainText(`51–100 of ${counts.pending}`);
  const second = await titles(page);
  expect(second).not.toEqual(first);
  await pager(page).getByRole("button", { name: "Next" }).click();
  await expect(pager(page)).toContainText("101–150");
  await pager(page).getByRole("button", { name: "Previous" }).click();
  await expect(pager(page)).toContainText("51–100");
  expect(await titles(page)).toEqual(second);
  await pager(page).getByRole("button", { name: "Previous" }).click();
  await expect(pager(page)).toContainText("1–50");
  expect(await titles(page)).toEqual(first);
  await expect(pager(page).getByRole("button", { name: "Previous" })).toBeDisabled();
  // A reload at a later page shows that page (its cursor is in the address).
  await pager(page).getByRole("button", { name: "Next" }).click();
  await expect(pager(page)).toContainText("51–100");
  await page.reload();
  await expect(pager(page)).toContainText("51–100");
  expect(await titles(page)).toEqual(second);
  // Every list request asked for one page of summaries: never the whole list.
  const lists = listRequests(asked);
  expect(lists.length).toBeGreaterThan(0);
  for (const url of lists) {
    expect(url.searchParams.get("view")).toBe("summary");
    expect(Number(url.searchParams.get("limit"))).toBeLessThanOrEqual(50);
  }
  await shoot(page, "scale-inbox");
  // The server's inbox and a review opened from it pass WCAG 2.1 A and AA.
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await wcagViolations(page), `inbox at ${width} px`).toEqual([]);
  }
  await rows(page).first().getByRole("link").click();
  await expect(page.getByRole("button", { name: "Approve" })).toBeEnabled();
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 900 });
    expect(await wcagViolations(page), `review at ${width} px`).toEqual([]);
  }
  await shoot(page, "scale-review");
});

test("status, type, requester, order and text are answered by the server, with the counts", async ({ page }) => {
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(50);
  const tabs = page.getByRole("group", { name: "Status" });
  for (const [label, key] of [["Pending", "pending"], ["Approved", "approved"], ["Rejected", "rejected"], ["Cancelled", "cancelled"]]) {
    await expect(tabs.getByRole("button", { name: new RegExp(`^${label}`) })).toContainText(String(counts[key]));
  }
  await tabs.getByRole("button", { name: /^Approved/ }).click();
  await expect(pager(page)).toContainText(`1–50 of ${counts.approved}`);
  await expect(rows(page).first()).toContainText("approved");
  await tabs.getByRole("button", { name: /^All/ }).click();
  const total = counts.pending + counts.approved + counts.rejected + counts.cancelled;
  expect(total).toBeGreaterThanOrEqual(REVIEWS);
  await expect(pager(page)).toContainText(`1–50 of ${total}`);
  await page.getByLabel("Requester").selectOption("agent-3");
  await expect(rows(page).first()).toContainText("by agent-3");
  for (const row of await rows(page).all()) await expect(row).toContainText("by agent-3");
  await page.getByLabel("Type").selectOption("context");
  await expect(page.getByRole("status").filter({ hasText: "No review matches these filters" })).toBeVisible();
  await page.getByLabel("Type").selectOption("plan");
  // Each order shows the server's own first page (polled: the answer to an
  // earlier filter may still be arriving when the order changes).
  for (const order of ["newest", "oldest"]) {
    const query = `/reviews?view=summary&status=all&target_type=plan&requester=agent-3&order=${order}&limit=50`;
    const expected = (await api(server, keys.reviewer, "GET", query)).body.items.map((s) => s.title);
    await page.getByLabel("Order").selectOption(order);
    await expect.poll(() => titles(page), { timeout: 15_000 }).toEqual(expected);
  }
  expect(await titles(page)).toHaveLength(50);
  // Text: found by the server's index, whatever page it would be on.
  await page.getByLabel("Requester").selectOption("");
  await page.getByLabel("Search reviews").fill("Plan 9999");
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toContainText("Plan 9999");
  await shoot(page, "scale-search");
});

test("changes made through the API patch the open inbox in place, without asking for the list again", async ({ page }) => {
  await page.goto(`${server.url}/?sort=newest`);
  await expect(rows(page)).toHaveCount(50);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  const asked = recordApi(page);
  const pending = page.getByRole("group", { name: "Status" }).getByRole("button", { name: /^Pending/ });

  // A new request newer than every other: it opens the page, and is counted.
  const created = newPlanReview(8);
  created.confirm.requested_at = "2026-12-01T00:00:00.000Z";
  expect((await api(server, keys.agent, "POST", "/reviews", created)).status).toBe(201);
  await expect(rows(page).first()).toContainText("Delete stale preview environments 8");
  await expect(rows(page)).toHaveCount(51);
  await expect(pending).toContainText(String(counts.pending + 1));

  // One on the page is decided elsewhere: it leaves the Pending tab, and is counted.
  const second = (await titles(page))[1];
  const id = await rows(page).nth(1).getByRole("link").getAttribute("href");
  const decided = await api(server, keys.reviewer, "POST", `${id}/decisions`,
    { status: "approved", decided_by_role: "reviewer", reason: "Done elsewhere" }, { "Idempotency-Key": "scale-1" });
  expect(decided.status).toBe(200);
  await expect(rows(page).filter({ hasText: second })).toHaveCount(0);
  await expect(pending).toContainText(String(counts.pending));
  await expect(page.getByRole("group", { name: "Status" }).getByRole("button", { name: /^Approved/ })).toContainText(String(counts.approved + 1));
  expect(listRequests(asked), "the list is not asked for again").toEqual([]);
});

test("with the live stream refused, only what changed since the last position is asked for every 10 seconds", async ({ page }) => {
  await page.route("**/api/v1/events?*", (route) => route.abort("connectionrefused"));
  await page.goto(`${server.url}/?sort=newest`);
  await expect(rows(page)).toHaveCount(50);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Refreshing every 10 s", { timeout: 30_000 });
  const asked = recordApi(page);
  const created = newPlanReview(9);
  created.confirm.requested_at = "2026-12-02T00:00:00.000Z";
  expect((await api(server, keys.agent, "POST", "/reviews", created)).status).toBe(201);
  await expect(rows(page).first()).toContainText("Delete stale preview environments 9", { timeout: 15_000 });
  await expect(page.getByRole("link", { name: /^Inbox/ })).toContainText(String(counts.pending + 1));
  expect(listRequests(asked), "the list is not asked for again").toEqual([]);
  const polls = asked.filter((u) => u.pathname === "/api/v1/changes");
  expect(polls.length).toBeGreaterThan(0);
  // Each poll starts where the one before ended.
  const positions = polls.map((u) => Number(u.searchParams.get("after")));
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  // The browser logs each refused stream; nothing else may have failed.
  page.errors = page.errors.filter((e) => !e.includes("net::ERR_CONNECTION_REFUSED"));
});
