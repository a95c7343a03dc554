// The reviewer's flows through the release build in headless chromium: inbox,
// review page with the plan DAG, decisions saved to local storage, import,
// keyboard-only use, phone width, damaged and full storage.
import { expect, test } from "@playwright/test";
import { arriveLate, failOnScriptErrors, shoot } from "./support.mjs";

const MIGRATION = "/reviews/550e8400-e29b-41d4-a716-446655440520";
const BILLING = "/reviews/c0ffee00-0000-4000-8000-000000000003";
const ROTATION = "/reviews/c0ffee00-0000-4000-8000-000000000001";
const AUDIT = "/reviews/c0ffee00-0000-4000-8000-000000000005";

failOnScriptErrors();

// The app's rows: the first paint's drawing (body.painting) stands before them, its links
// working but its keys, tabs and search the app's.
const rows = (page) => page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");
const reviewKeys = (page) =>
  page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.review.")).length);
// A first visit lists the demo's rows before the demo is stored, then reads
// back what it stored: wait for both, so an edit of storage comes after them.
const demoStored = async (page) => {
  await expect.poll(() => reviewKeys(page), "the demo reviews are stored").toBe(8);
  await expect.poll(() => page.evaluate(() => performance.getEntriesByName("countersign:reviews-read").length), "and read back").toBe(1);
};
const storedStatus = (page, id) =>
  page.evaluate((id) => JSON.parse(localStorage.getItem(`countersign.v1.review.${id}`)).confirm.status, id);

test("the inbox lists the demo reviews, what expires first, with counts and filters", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  await expect(rows(page)).toHaveCount(7);
  // What expires first is on top, and says when: the demo's calls lapse two hours after they were asked.
  await expect(rows(page).nth(0)).toContainText("wire_transfer");
  await expect(rows(page).nth(0)).toContainText(/expires in (2 hours|1\d\d minutes)/);
  await expect(rows(page).nth(4)).toContainText("Database Migration Plan");
  await expect(rows(page).nth(5)).toContainText("Ship billing v2 to production");
  await expect(rows(page).nth(5)).toContainText("1 problem");
  await expect(rows(page).nth(6)).toContainText("Rotate production database credentials");
  await expect(rows(page).nth(6)).toContainText("by secops-agent");
  await expect(rows(page).nth(6).locator("time")).toHaveAttribute("title", /UTC$/);
  const status = page.getByRole("group", { name: "Status" });
  await expect(status.getByRole("button", { name: /Approved/ })).toContainText("1");
  await status.getByRole("button", { name: /All/ }).click();
  await expect(rows(page)).toHaveCount(8);
  await expect(page).toHaveURL(/status=all/);
  await page.getByRole("searchbox", { name: "Search reviews" }).fill("billing");
  await expect(rows(page)).toHaveCount(1);
  await page.reload();
  await expect(rows(page)).toHaveCount(1);
  await page.getByRole("searchbox", { name: "Search reviews" }).fill("no such thing");
  await expect(page.getByRole("status")).toContainText("No review matches these filters");
  await page.goto("/");
  // The row is drawn again once its problems are counted: click the row that stays.
  await expect(rows(page).nth(5)).toContainText("1 problem");
  await page.getByRole("link", { name: /Ship billing v2/ }).click();
  await expect(page).toHaveURL(new RegExp(BILLING));
  await expect(page.getByRole("heading", { level: 1, name: "Ship billing v2 to production" })).toBeVisible();
  await page.goBack();
  await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  await page.goto("/no/such/page");
  await expect(page.getByRole("heading", { level: 1, name: "Page not found" })).toBeVisible();
  await page.goto("/");
  await shoot(page, "inbox");
});

test("a first visit lists the demo's rows before the demo's code arrives", async ({ page }) => {
  // The demo's code is held back; its rows come from summaries in the first load.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const demo = /\/split_demo-[0-9a-f]+\.wasm$/;
  await page.route(demo, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await expect(rows(page).nth(4)).toContainText("Database Migration Plan");
  await expect(rows(page).nth(6)).toContainText("Rotate production database credentials");
  await expect(page.getByRole("group", { name: "Status" }).getByRole("button", { name: /Approved/ })).toContainText("1");
  expect(await reviewKeys(page), "nothing is stored before the demo's code arrives").toBe(0);
  await shoot(page, "inbox-first-visit");
  release();
  // Once it arrives the reviews are stored and read: the rows stay, and gain their problems.
  await expect(rows(page).nth(5)).toContainText("1 problem");
  expect(await reviewKeys(page)).toBe(8);
  await page.getByRole("link", { name: /Ship billing v2/ }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Ship billing v2 to production" })).toBeVisible();
});

test("a first visit whose demo cannot be fetched says so and lists no rows", async ({ page }) => {
  await page.route(/\/split_demo-[0-9a-f]+\.wasm$/, (route) => route.abort("internetdisconnected"));
  await page.goto("/");
  await expect(page.getByRole("alert").filter({ hasText: "The demo reviews could not be loaded" })).toBeVisible();
  await expect(rows(page)).toHaveCount(0);
  expect(await reviewKeys(page)).toBe(0);
  await shoot(page, "inbox-demo-unavailable");
  // The browser and the split loader log the refused fetch; nothing else may be logged.
  const refused = page.errors.filter((e) => e.startsWith("TypeError: Failed to fetch") || e.includes("ERR_INTERNET_DISCONNECTED"));
  page.errors.splice(0, page.errors.length, ...page.errors.filter((e) => !refused.includes(e)));
});

test("a plan review shows every step, the problems, the history and the raw JSON", async ({ page }) => {
  await page.goto(ROTATION);
  await expect(page.getByRole("heading", { level: 1, name: "Rotate production database credentials" })).toBeVisible();
  const steps = page.locator(".dag g[role=button]");
  await expect(steps).toHaveCount(98);
  // Each step is named by what it shows, and described in full.
  await expect(steps.first()).toHaveAccessibleDescription(/^Step 1: Inventory every credential older than 90 days/);
  await steps.first().click();
  await expect(page.getByRole("region", { name: "Step details" })).toContainText("Inventory every credential older than 90 days");
  await shoot(page, "review-large-plan");

  await page.goto(BILLING);
  await expect(page.locator(".dag g[role=button]")).toHaveCount(5);
  await expect(page.getByText("cycle: cannot run")).toBeVisible();
  const problems = page.getByRole("list", { name: "Validation problems" });
  await expect(problems).toContainText("/target/plan/steps/1/dependencies/1");
  await expect(problems).toContainText("Migrate invoice tables");
  await expect(page.getByRole("button", { name: "Approve" })).toBeDisabled();
  await expect(page.getByText("Approval is impossible")).toBeVisible();
  await shoot(page, "review-cycle");

  await page.goto(AUDIT);
  const history = page.getByRole("list", { name: "Decision history" });
  await expect(history).toContainText("approved by security_officer");
  await expect(history).toContainText("Retention cost reviewed with finance");
  await page.getByText("Raw JSON (MPLP documents)").click();
  await expect(page.locator("pre")).toContainText('"decision_id"');
  await shoot(page, "review-decided");
});

test("a plan's graph zooms in and out, and Reset brings it back to the size it opened at", async ({ page }) => {
  await page.goto(ROTATION);
  const toolbar = page.getByRole("toolbar", { name: "Plan drawing" });
  const level = toolbar.locator(".zoom-level");
  const graph = page.getByRole("group", { name: "Plan graph: 98 steps" });
  const width = async () => Number(await graph.getAttribute("width"));
  const reset = toolbar.getByRole("button", { name: "Reset" });
  await expect(reset, "nothing to reset at the size it opened at").toBeDisabled();
  const [firstLevel, firstWidth] = [await level.textContent(), await width()];
  await toolbar.getByRole("button", { name: "Zoom in" }).click();
  await expect(level).not.toHaveText(firstLevel);
  expect(await width()).toBeCloseTo(firstWidth * 1.25, -1);
  await toolbar.getByRole("button", { name: "Zoom out" }).click();
  await toolbar.getByRole("button", { name: "Zoom out" }).click();
  expect(await width()).toBeCloseTo(firstWidth / 1.25, -1);
  await reset.click();
  await expect(level).toHaveText(firstLevel);
  expect(await width()).toBe(firstWidth);
  await expect(reset).toBeDisabled();
});

test("approving with a reason persists across a reload and updates inbox, plan and history", async ({ page }) => {
  await page.goto(MIGRATION);
  await expect(page.locator(".dag g[role=button]")).toHaveCount(3);
  await page.getByLabel("Decide as role").fill("dba_reviewer");
  await page.getByLabel(/^Reason/).fill("Rollback documented; go ahead.");
  await page.getByRole("button", { name: "Approve" }).click();
  const decided = page.getByRole("status").filter({ hasText: "Decided" });
  await expect(decided).toContainText("approved by dba_reviewer");
  await expect(page.locator(".plan-title")).toContainText("approved");
  await expect(page.getByRole("list", { name: "Decision history" })).toContainText("Rollback documented; go ahead.");
  expect(await storedStatus(page, "550e8400-e29b-41d4-a716-446655440520")).toBe("approved");

  await page.reload();
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by dba_reviewer");
  await expect(page.getByRole("list", { name: "Decision history" })).toContainText("dba_reviewer");
  await page.getByRole("link", { name: "← Inbox" }).click();
  await expect(rows(page)).toHaveCount(6);
  await expect(page.getByRole("list", { name: "Reviews" })).not.toContainText("Database Migration Plan");
  await expect(page.getByRole("navigation", { name: "Main" })).toContainText("6");
});

test("a decision made in another tab shows in this one at once, and a draft typed here is kept", async ({ page, context }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  const other = await context.newPage();
  await other.goto(MIGRATION);
  await expect(other.locator(".dag g[role=button]")).toHaveCount(3);
  // A reason typed here for the billing review stays while the other tab decides.
  await page.goto(BILLING);
  await page.getByLabel(/^Reason/).fill("Half-written thought");
  await other.getByLabel("Decide as role").fill("dba_reviewer");
  await other.getByRole("button", { name: "Approve" }).click();
  await expect(other.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by dba_reviewer");
  await expect(page.getByRole("navigation", { name: "Main" })).toContainText("6");
  await expect(page.getByLabel(/^Reason/)).toHaveValue("Half-written thought");
  await page.getByRole("link", { name: "← Inbox" }).click();
  await expect(rows(page)).toHaveCount(6);
  await expect(page.getByRole("list", { name: "Reviews" })).not.toContainText("Database Migration Plan");
  // Removed in the other tab (a reset of the demo, say): gone here too.
  await other.evaluate(() => localStorage.removeItem("countersign.v1.review.c0ffee00-0000-4000-8000-000000000001"));
  await expect(rows(page)).toHaveCount(5);
  await other.close();
});

test("rejecting without a reason shows the error next to the field and saves nothing", async ({ page }) => {
  await page.goto(MIGRATION);
  await page.getByRole("button", { name: "Reject" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "a rejection needs a reason" })).toBeVisible();
  await expect(page.getByLabel(/^Reason/)).toBeFocused();
  await expect(page.getByLabel(/^Reason/)).toHaveAttribute("aria-invalid", "true");
  expect(await storedStatus(page, "550e8400-e29b-41d4-a716-446655440520")).toBe("pending");
  await shoot(page, "review-reject-error");
  await page.reload();
  await expect(page.getByText("No decision yet.")).toBeVisible();
  await page.getByLabel(/^Reason/).fill("Missing rollback plan");
  await page.getByLabel(/^Reason/).press("Control+Enter");
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("rejected");
  expect(await storedStatus(page, "550e8400-e29b-41d4-a716-446655440520")).toBe("rejected");
});

test("importing a plan with a cycle lists the cycle and stores nothing; a valid one is added", async ({ page }) => {
  // First start stores the demo reviews (their code loads on demand): wait for them.
  await page.goto("/");
  await demoStored(page);
  await page.goto("/import");
  const before = await reviewKeys(page);
  const id = (n) => `aaaaaaaa-0000-4000-8000-${String(n).padStart(12, "0")}`;
  const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
  const confirm = { meta, confirm_id: id(1), target_type: "plan", target_id: id(2), status: "pending", requested_by_role: "importer", requested_at: "2026-11-20T10:00:00Z", reason: "Imported request" };
  const plan = (deps) => ({
    meta, plan_id: id(2), context_id: id(3), title: "Imported cyclic plan", objective: "Test import", status: "proposed",
    steps: [
      { step_id: id(10), description: "Alpha", status: "pending", dependencies: deps ? [id(11)] : [] },
      { step_id: id(11), description: "Beta", status: "pending", dependencies: [id(10)] },
    ],
  });
  await page.getByLabel("Or paste JSON").fill(JSON.stringify([confirm, plan(true)]));
  await page.getByRole("button", { name: "Check and import" }).click();
  const problems = page.getByRole("list", { name: "Import problems" });
  await expect(problems).toContainText("/1/steps/0/dependencies/0");
  await expect(problems).toContainText('step 0 "Alpha" → depends on step 1 "Beta" → depends on step 0 "Alpha"');
  await expect(page.getByRole("region", { name: "Import of Pasted JSON" })).toContainText("Imported 0 reviews");
  expect(await reviewKeys(page)).toBe(before);
  await shoot(page, "import-refused");

  await page.getByLabel("Or paste JSON").fill("{ not json");
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText(/Nothing imported: not JSON/).first()).toBeVisible();
  expect(await reviewKeys(page)).toBe(before);

  await page.getByLabel("Or paste JSON").fill(JSON.stringify([confirm, plan(false)]));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();
  expect(await reviewKeys(page)).toBe(before + 1);
  await page.goto("/");
  await expect(rows(page).filter({ hasText: "Imported cyclic plan" })).toHaveCount(1);
});

test("a reviewer approves with the keyboard alone", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await page.keyboard.press("?");
  await expect(page.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("dialog")).toHaveCount(0);
  // The fifth row: the four calls that expire first come before it.
  for (let i = 0; i < 6; i += 1) await page.keyboard.press("j");
  await page.keyboard.press("k");
  await expect(page.getByRole("link", { name: /Database Migration Plan/ })).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(MIGRATION));
  // The page's code may still be arriving: the reviewer presses `a` once it shows.
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Database Migration Plan");
  await page.keyboard.press("a");
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by reviewer");
  await page.keyboard.press("Escape");
  await expect(page).toHaveURL(/\/$/);
  await expect(rows(page)).toHaveCount(6);
  await page.keyboard.press("/");
  await expect(page.getByRole("searchbox", { name: "Search reviews" })).toBeFocused();
});

test("every screen fits a 375 px phone without sideways scrolling", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 800 });
  for (const path of ["/", MIGRATION, BILLING, ROTATION, "/import", "/settings"]) {
    await page.goto(path);
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${path} is ${width}px wide`).toBeLessThanOrEqual(375);
  }
  await page.goto("/settings");
  await shoot(page, "settings");
});

test("a damaged stored review is kept aside and reported; the app still starts", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await demoStored(page);
  await page.evaluate(() => localStorage.setItem("countersign.v1.review.broken", "{ this is not json"));
  await page.reload();
  await expect(page.getByRole("alert").filter({ hasText: "kept aside" })).toContainText("countersign.quarantine.");
  await expect(rows(page)).toHaveCount(7);
  const kept = await page.evaluate(() =>
    Object.keys(localStorage).filter((k) => k.startsWith("countersign.quarantine.")).map((k) => localStorage.getItem(k)));
  expect(kept).toEqual(["{ this is not json"]);
  await shoot(page, "inbox-damaged-storage");
  // The notice names a long storage key: it wraps instead of widening the page.
  await page.setViewportSize({ width: 375, height: 800 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("a review edited in storage to claim an approval is kept aside, never shown as approved", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await demoStored(page);
  const forged = await page.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => {
      const review = k.startsWith("countersign.v1.review.") && JSON.parse(localStorage.getItem(k));
      return review && review.confirm.status === "pending" && !(review.confirm.decisions || []).length;
    });
    const review = JSON.parse(localStorage.getItem(key));
    review.confirm.status = "approved";
    localStorage.setItem(key, JSON.stringify(review));
    return { key, id: review.confirm.confirm_id };
  });
  await page.reload();
  await expect(page.getByRole("alert").filter({ hasText: "kept aside" })).toContainText("edited outside Countersign");
  await expect(rows(page)).toHaveCount(6);
  await page.goto("/?status=approved");
  await expect(page.locator(`a[href="/reviews/${forged.id}"]`)).toHaveCount(0);
  const kept = await page.evaluate((key) => [localStorage.getItem(key), Object.keys(localStorage).filter((k) => k.startsWith("countersign.quarantine.")).length], forged.key);
  expect(kept, "moved aside, not deleted").toEqual([null, 1]);
});

const INDEX = "countersign.v1.inbox-index";
const storedIndex = (page) => page.evaluate((key) => JSON.parse(localStorage.getItem(key)), INDEX);

test("the inbox is drawn from its index, then every review is read and the index is kept in step", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  // The app writes the index itself, a moment after the reviews are shown.
  await expect.poll(async () => (await storedIndex(page))?.length).toBe(8);
  const index = await storedIndex(page);
  const migration = index.find((s) => s.title === "Database Migration Plan");
  expect(migration).toMatchObject({ status: "pending", type: "plan", by: "agent", decisions: 0, kind: "plan" });
  // An index edited outside Countersign (a pending review claimed approved
  // under another title, and a review that is not stored) stands for a moment
  // only: the stored reviews are read right after the first frame and win.
  await page.evaluate(({ key, id }) => {
    const index = JSON.parse(localStorage.getItem(key));
    const edited = index.find((s) => s.id === id);
    edited.status = "approved";
    edited.title = "Edited in the index";
    index.push({ ...edited, id: "00000000-0000-4000-8000-00000000beef", title: "Not stored anywhere" });
    localStorage.setItem(key, JSON.stringify(index));
  }, { key: INDEX, id: migration.id });
  await page.reload();
  await expect(rows(page)).toHaveCount(7);
  await expect(rows(page).nth(4)).toContainText("Database Migration Plan");
  await expect(page.getByText("Edited in the index")).toHaveCount(0);
  // The rows' problems are counted once their reviews are read.
  await expect(rows(page).nth(5)).toContainText("1 problem");
  const order = await page.evaluate(() => ["countersign:inbox-ready", "countersign:reviews-read"].map((m) => performance.getEntriesByName(m)[0]?.startTime));
  expect(order[0], "the first page was drawn before the reviews were read").toBeLessThan(order[1]);
  await page.goto("/?status=approved");
  await expect(page.locator(`a[href="/reviews/${migration.id}"]`)).toHaveCount(0);
  await expect(page.getByText("Not stored anywhere")).toHaveCount(0);
  // The index is rewritten from the reviews, and follows each decision.
  await expect.poll(async () => (await storedIndex(page)).find((s) => s.id === migration.id)?.title).toBe("Database Migration Plan");
  expect((await storedIndex(page)).map((s) => s.id)).not.toContain("00000000-0000-4000-8000-00000000beef");
  await page.goto(MIGRATION);
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toBeVisible();
  await expect.poll(async () => (await storedIndex(page)).find((s) => s.id === migration.id)).toMatchObject({ status: "approved", decisions: 1 });
  // Opened by its address with an index, a review waits until it is read.
  await page.reload();
  await expect(page.getByRole("heading", { level: 1, name: "Database Migration Plan" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by");
});

const HEAD = "countersign.v1.inbox-head";
const storedHead = (page) => page.evaluate((key) => JSON.parse(localStorage.getItem(key)), HEAD);

test("a start draws the inbox's first page from the index head, then lists from the whole index", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  // Written beside the index: the counts, the requesters and the first page of pending reviews.
  await expect.poll(async () => (await storedHead(page))?.pending.length).toBe(7);
  const head = await storedHead(page);
  expect(head.counts.pending).toBe(7);
  expect(Object.values(head.counts).reduce((a, b) => a + b)).toBe(8);
  expect(head.requesters).toEqual([...new Set(head.requesters)].sort());
  // The head is the inbox's first page: what expires first on top, then the rest oldest first.
  const pending = (await storedIndex(page)).filter((s) => s.status === "pending");
  const deadline = (s) => s.expires ?? "9999";
  const expiringFirst = [...pending].sort((a, b) => deadline(a).localeCompare(deadline(b)) || a.at.localeCompare(b.at));
  expect(head.pending.map((s) => s.id)).toEqual(expiringFirst.map((s) => s.id));
  // A head edited outside Countersign draws the first frame only: the index, parsed
  // right after it, then the stored reviews win.
  await page.evaluate((key) => {
    const edited = JSON.parse(localStorage.getItem(key));
    edited.pending[0].title = "Edited in the head";
    edited.counts.pending = 99;
    localStorage.setItem(key, JSON.stringify(edited));
  }, HEAD);
  await page.addInitScript(() => {
    new MutationObserver(() => {
      if (document.body?.textContent.includes("Edited in the head")) window.__drawnFromHead = true;
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  await page.reload();
  await expect(rows(page)).toHaveCount(7);
  await expect(page.getByText("Edited in the head")).toHaveCount(0);
  expect(await page.evaluate(() => window.__drawnFromHead), "the first frame came from the head").toBe(true);
  await expect(page.getByRole("navigation", { name: "Main" }).locator(".count")).toHaveText("7");
  await expect(page.getByRole("navigation", { name: "Pages" })).toContainText("1–7 of 7");
  // Any other page of the inbox waits for the whole index: all 8 are listed.
  await page.goto("/?status=all");
  await expect(rows(page)).toHaveCount(8);
  // A damaged head (or an index written before heads were) is not used: the first
  // page comes from the index itself, and both are written again once the reviews are read.
  await page.evaluate((key) => localStorage.setItem(key, "{not json"), HEAD);
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await expect(page.getByRole("navigation", { name: "Pages" })).toContainText("1–7 of 7");
  await expect.poll(async () => (await storedHead(page).catch(() => null))?.pending.length).toBe(7);
});

test("the code that reads stored reviews is not in the first load: while it cannot be fetched the inbox says so and keeps its index's rows", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await expect.poll(async () => (await storedIndex(page))?.length).toBe(8);
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  await page.route(/\/split_reading-[0-9a-f]+\.wasm$/, (route) => route.abort("internetdisconnected"));
  await page.reload();
  const notice = page.getByRole("alert").filter({ hasText: "The stored reviews cannot be read yet" });
  await expect(notice).toBeVisible();
  await expect(rows(page), "drawn from the index meanwhile").toHaveCount(7);
  await shoot(page, "reading-code-unavailable");
  // A review opened now waits for it; once the code comes, everything is read.
  await rows(page).filter({ hasText: "Database Migration Plan" }).getByRole("link").click();
  await expect(page.getByText("Reading the stored reviews…")).toBeVisible();
  await page.unroute(/\/split_reading-[0-9a-f]+\.wasm$/);
  await expect(notice).toHaveCount(0, { timeout: 10_000 });
  await expect(page.getByRole("heading", { level: 1, name: "Database Migration Plan" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Approve" })).toBeEnabled();
  const reading = fetched.filter((p) => /^\/split_reading-[0-9a-f]+\.wasm$/.test(p));
  expect(reading.length, "fetched again after the refusal").toBeGreaterThan(1);
  const unexpected = page.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|^TypeError: Failed to fetch/.test(e));
  expect(unexpected).toEqual([]);
  page.errors.length = 0;
});

test("a full storage quota is a clear error and the decision stays on screen", async ({ page }) => {
  await page.goto(MIGRATION);
  await expect(page.getByRole("button", { name: "Approve" })).toBeEnabled();
  await page.evaluate(() => {
    // The inbox index is only a shortcut: a save that does not fit drops it
    // and tries again. Without it, nothing can be freed.
    localStorage.removeItem("countersign.v1.inbox-index");
    localStorage.removeItem("countersign.v1.inbox-head");
    const chunk = "x".repeat(256 * 1024);
    for (let i = 0; i < 200; i++) {
      try { localStorage.setItem(`filler.${i}`, chunk); } catch { break; }
    }
    let small = 1024;
    while (small >= 1) {
      try { localStorage.setItem(`filler.small.${small}.${Math.random()}`, "x".repeat(small)); } catch { small = Math.floor(small / 2); }
    }
  });
  await page.getByLabel(/^Reason/).fill("Reviewed the migration steps.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "browser storage is full" })).toBeVisible();
  await expect(page.getByLabel(/^Reason/)).toHaveValue("Reviewed the migration steps.");
  await expect(page.getByText("No decision yet.")).toBeVisible();
  expect(await storedStatus(page, "550e8400-e29b-41d4-a716-446655440520")).toBe("pending");
});

test("settings: the reviewer role signs decisions and the theme applies", async ({ page }) => {
  await page.goto("/settings");
  await page.getByLabel("Reviewer role").fill("security_officer");
  await page.getByRole("button", { name: "Save role" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Saved." })).toBeVisible();
  await page.getByLabel("Theme").selectOption("dark");
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await expect(page.getByText("This browser's local storage")).toBeVisible();
  await shoot(page, "settings-dark");
  await page.reload();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await page.goto(MIGRATION);
  await expect(page.getByLabel("Decide as role")).toHaveValue("security_officer");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by security_officer");
});

test("export writes MPLP documents and learning samples", async ({ page }) => {
  // On this first visit the demo reviews arrive late: the export waits for them.
  await arriveLate(page, /\/split_demo-[0-9a-f]+\.wasm$/, 1000);
  await page.goto("/import");
  const [reviews] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export all reviews" }).click()]);
  const docs = JSON.parse(await (await reviews.createReadStream()).toArray().then((c) => Buffer.concat(c).toString()));
  expect(docs.filter((d) => d.confirm_id)).toHaveLength(8);
  expect(docs.filter((d) => d.target_type === "other")).toHaveLength(4);
  expect(docs.filter((d) => d.plan_id && d.steps)).toHaveLength(4);
  expect(docs.every((d) => d.meta?.protocol_version === "1.0.0")).toBe(true);
  const [samples] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export learning samples" }).click()]);
  const lines = (await (await samples.createReadStream()).toArray().then((c) => Buffer.concat(c).toString())).trim().split("\n").map(JSON.parse);
  expect(lines).toHaveLength(1);
  expect(lines[0].sample_family).toBe("confirm_decision");
  expect(lines[0].output.decider_role).toBe("security_officer");
  expect(lines[0].meta.human_feedback_label).toBe("approved");
});

test("the app can be installed: manifest and icons are served", async ({ page, request }) => {
  await page.goto("/");
  const href = await page.locator('link[rel="manifest"]').getAttribute("href");
  // Its addresses are relative to it, so an app served under a sub-path installs there.
  const at = new URL(href, page.url());
  const manifest = await (await request.get(at.href)).json();
  expect(manifest.display).toBe("standalone");
  expect(new URL(manifest.start_url, at).href).toBe(new URL("/", page.url()).href);
  for (const icon of manifest.icons) {
    const response = await request.get(new URL(icon.src, at).href);
    expect(response.ok(), icon.src).toBe(true);
    expect(response.headers()["content-type"]).toBe(icon.type);
  }
});

test("the first load holds the inbox; a screen whose code cannot be fetched says so and loads on Try again", async ({ page }) => {
  const fetched = [];
  page.on("request", (r) => fetched.push(new URL(r.url()).pathname));
  // The review page's code is refused, as when the network drops.
  await page.route(/\/split_review-[0-9a-f]+\.wasm$/, (route) => route.abort("internetdisconnected"));
  await page.goto("/");
  await expect(rows(page).first()).toBeVisible();
  const firstWasm = fetched.filter((p) => p.endsWith(".wasm"));
  expect(firstWasm.filter((p) => /^\/countersign-app-[0-9a-f]+_bg\.wasm$/.test(p)), "the app's first-load module").toHaveLength(1);

  const first = rows(page).first();
  const title = await first.locator(".review-title").textContent();
  await first.getByRole("link").click();
  const alert = page.getByRole("alert").filter({ hasText: "This screen could not be loaded" });
  await expect(alert).toBeVisible();
  await shoot(page, "screen-load-failed");

  await page.unroute(/\/split_review-[0-9a-f]+\.wasm$/);
  await alert.getByRole("button", { name: "Try again" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(title);
  await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
  expect(fetched.some((p) => /^\/split_review-[0-9a-f]+\.wasm$/.test(p)), "the review page came as its own chunk").toBe(true);
  // The refused fetches are logged by the browser; nothing else went wrong.
  const unexpected = page.errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|^TypeError: Failed to fetch/.test(e));
  expect(unexpected).toEqual([]);
  page.errors.length = 0;
});

test("leaving a screen while its code or data still loads is safe: what arrives late for the left screen is dropped", async ({ page }) => {
  // The review chunk (which also counts the inbox rows' problems) arrives late.
  const chunk = /\/split_review-[0-9a-f]+\.wasm$/;
  await arriveLate(page, chunk, 1500);
  const asked = page.waitForRequest(chunk);
  await page.goto("/");
  await expect(rows(page).first()).toBeVisible();
  // The inbox has asked for its rows' problem counts; the reviewer opens a row before they come.
  await asked;
  const title = await rows(page).first().locator(".review-title").textContent();
  await rows(page).first().getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(title);
  await expect(page.getByRole("button", { name: "Approve" })).toBeVisible();
  await expect(page.getByRole("alert")).toHaveCount(0);
  // Back in the inbox, the counts are asked for again and shown.
  await page.goBack();
  await expect(rows(page).nth(5)).toContainText("1 problem");
});

test("an import that waits for the stored reviews to be read is kept when the reviewer leaves the page meanwhile", async ({ page }) => {
  await page.goto("/");
  await expect(rows(page)).toHaveCount(7);
  await expect.poll(async () => (await storedIndex(page))?.length).toBe(8);
  // On the next visit the stored reviews are read late (their code arrives late).
  await arriveLate(page, /\/split_reading-[0-9a-f]+\.wasm$/, 1500);
  await page.goto("/import");
  const request = { requestedByRole: "late-agent", sessionId: "s-late", runId: "r-late", toolCall: { name: "late_import_call", args: {} }, humanSummary: "Imported while reading", riskTier: "R1" };
  await page.getByLabel("Or paste JSON").fill(JSON.stringify(request));
  await page.getByRole("button", { name: "Check and import" }).click();
  await page.getByRole("navigation").getByRole("link", { name: /^Inbox/ }).click();
  await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  await expect(rows(page).filter({ hasText: "late_import_call" }), "imported once the reviews were read").toHaveCount(1);
  await expect(rows(page)).toHaveCount(8);
});

test("on a phone what is asked comes before the buttons, which stay on screen once it is read", async ({ page }) => {
  const WIRE_CALL = "/reviews/c0ffee00-0000-4000-8000-000000002002";
  for (const [path, asked] of [[MIGRATION, "#plan-title"], [WIRE_CALL, ".tool-call"]]) {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(path);
    const approve = page.getByRole("button", { name: /^Approve/ }).first();
    await expect(approve).toBeVisible();
    const what = page.locator(asked).first();
    // Page order: what is asked precedes the decision buttons.
    const before = await what.evaluate(
      (node, button) => Boolean(node.compareDocumentPosition(button) & Node.DOCUMENT_POSITION_FOLLOWING),
      await approve.elementHandle(),
    );
    expect(before, `${path}: ${asked} comes before Approve`).toBe(true);
    // Having read it (scrolled past it), the buttons are on screen without scrolling back.
    await what.scrollIntoViewIfNeeded();
    await page.mouse.wheel(0, 600);
    // The wheel returns before the page has scrolled: a capture then showed the header mid-screen over blank space.
    await page.waitForFunction(() => new Promise((done) => {
      const from = scrollY;
      requestAnimationFrame(() => requestAnimationFrame(() => done(scrollY === from && scrollY > 0)));
    }));
    const box = await approve.boundingBox();
    expect(box.y, `${path}: Approve is above the bottom edge`).toBeLessThan(800 - box.height + 1);
    expect(box.y, `${path}: Approve is below the top edge`).toBeGreaterThanOrEqual(0);
    const name = path === MIGRATION ? "plan" : "call";
    await page.screenshot({ path: `tests/e2e/output/screenshots/phone-${name}-decision-bar-screen.png` });
    await shoot(page, path === MIGRATION ? "phone-plan-decision-bar" : "phone-call-decision-bar");
  }
});
