// Reaching the reviewer, on a real `countersign serve`: desktop notifications
// once opted in (one per new request while the tab is hidden; clicking opens
// it), the webhook deliveries in Settings with a real receiver that refuses at
// first, and an escalated request marked in the inbox.
import { expect, test } from "@playwright/test";
import { api, newPlanReview, shoot, startServer } from "./support.mjs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const rows = (page) => page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");

let dataDir;
let server;
let receiver;
test.beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-reach-"));
  // A webhook receiver that refuses its first two requests.
  receiver = { got: [] };
  receiver.http = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      receiver.got.push({ id: request.headers["webhook-id"], body: JSON.parse(body) });
      response.writeHead(receiver.got.length <= 2 ? 503 : 204).end();
    });
  });
  await new Promise((resolve) => receiver.http.listen(0, "127.0.0.1", resolve));
  writeFileSync(join(dataDir, "policy.toml"), '[[rule]]\nname = "plans"\ntarget = ["plan"]\nescalate_after = "15s"\n');
  server = await startServer(dataDir, "127.0.0.1:0", {
    extra: ["--policy", join(dataDir, "policy.toml"), "--webhook", `http://127.0.0.1:${receiver.http.address().port}/hook`],
  });
});
test.afterEach(async () => {
  await server.stop();
  receiver.http.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function connect(page) {
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
}

test("once opted in, a request created while the tab is hidden shows one notification that opens it", async ({ browser }) => {
  const context = await browser.newContext({ permissions: ["notifications"] });
  // Records each notification the page shows (the real constructor still runs).
  // Headless Chromium keeps every tab visible, so the test says when this one is
  // hidden: `document.hidden` and `visibilityState` follow `window.tabHidden`.
  await context.addInitScript(() => {
    Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: () => window.tabHidden === true });
    Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: () => (window.tabHidden ? "hidden" : "visible") });
    // The badge of an installed app, as the page sets it.
    window.badges = [];
    navigator.setAppBadge = (n) => (window.badges.push(n), Promise.resolve());
    navigator.clearAppBadge = () => (window.badges.push(0), Promise.resolve());
    const Real = window.Notification;
    window.shown = [];
    window.Notification = class extends Real {
      constructor(title, options) {
        super(title, options);
        window.shown.push({ title, tag: options?.tag, body: options?.body });
        window.lastShown = this;
      }
      static get permission() { return Real.permission; }
      static requestPermission(...args) { return Real.requestPermission(...args); }
    };
  });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await connect(page);
  // Connecting leads to the inbox; notifications are turned on in Settings.
  await page.goto(`${server.url}/settings`);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  const hide = (hidden) => page.evaluate((hidden) => {
    window.tabHidden = hidden;
    document.dispatchEvent(new Event("visibilitychange"));
  }, hidden);

  const badge = page.getByRole("link", { name: /^Inbox/ }).locator(".count");
  await expect(badge).toHaveText(/^[1-9]/);
  const pending = Number(await badge.textContent());
  // Not opted in: nothing is shown.
  await hide(true);
  expect((await api(server, server.agent, "POST", "/reviews", newPlanReview(1))).status).toBe(201);
  await expect(badge).toHaveText(String(pending + 1));
  expect(await page.evaluate(() => window.shown.length)).toBe(0);
  expect(await page.evaluate(() => window.badges.every((n) => n === 0)), "no badge before opting in").toBe(true);

  // Opted in with a click.
  await hide(false);
  await page.getByRole("button", { name: "Turn on notifications" }).click();
  await expect(page.getByRole("status").filter({ hasText: "On: a new request" })).toBeVisible();
  await expect.poll(() => page.evaluate(() => window.badges.at(-1))).toBe(pending + 1);
  await shoot(page, "settings-notifications");
  // Visible tab: the inbox shows it, no notification.
  expect((await api(server, server.agent, "POST", "/reviews", newPlanReview(2))).status).toBe(201);
  await expect(badge).toHaveText(String(pending + 2));
  expect(await page.evaluate(() => window.shown.length)).toBe(0);

  // Hidden tab: one notification, which opens the request.
  await hide(true);
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(3));
  expect(created.status).toBe(201);
  const id = created.body.review.confirm.confirm_id;
  await expect.poll(() => page.evaluate(() => window.shown.length)).toBe(1);
  await expect.poll(() => page.evaluate(() => window.badges.at(-1))).toBe(pending + 3);
  const [shown] = await page.evaluate(() => window.shown);
  expect(shown.title).toContain("Delete stale preview environments 3");
  expect(shown.tag).toBe(id);
  await page.evaluate(() => window.lastShown.onclick());
  await expect(page).toHaveURL(`${server.url}/reviews/${id}`);
  await expect(page.getByRole("heading", { level: 1 })).toContainText("Delete stale preview environments 3");
  expect(errors).toEqual([]);
  await context.close();
});

test("Settings shows the webhook's deliveries, retried after refusals, and the inbox marks an escalated request", async ({ page }) => {
  await connect(page);
  expect((await api(server, server.agent, "POST", "/reviews", newPlanReview(4))).status).toBe(201);
  // The receiver refused twice, then took the delivery (same id each time).
  await expect.poll(() => receiver.got.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
  expect(new Set(receiver.got.slice(0, 3).map((r) => r.id)).size).toBe(1);
  expect(receiver.got[0].body.type).toBe("review.created");
  await page.goto(`${server.url}/settings`);
  const card = page.getByRole("region", { name: "Webhooks" });
  await expect(card).toContainText(`http://127.0.0.1:${receiver.http.address().port}/…`);
  await expect(card.getByRole("list", { name: "Latest deliveries" }).getByRole("listitem").first()).toContainText("sent");
  await expect(card).toContainText("3 attempts");

  // After 15 s nobody decided the plan: escalated, marked in the inbox, told to the webhook.
  await page.goto(`${server.url}/?q=preview+environments+4`);
  await expect(rows(page).filter({ hasText: "Delete stale preview environments 4" }).locator(".badge-escalated")).toHaveText("Escalated", { timeout: 30_000 });
  await expect.poll(() => receiver.got.filter((r) => r.body.type === "review.escalated").length, { timeout: 30_000 }).toBe(1);
  await shoot(page, "inbox-escalated");
  await page.goto(`${server.url}/settings`);
  await page.getByRole("region", { name: "Webhooks" }).scrollIntoViewIfNeeded();
  await shoot(page, "settings-webhooks");
});

test("a phone pairs from a link without a key, decides as its own device, and is locked out once revoked", async ({ browser }) => {
  const desktop = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await connect(desktop);
  await desktop.goto(`${server.url}/settings`);
  await desktop.getByRole("button", { name: "Add a device" }).click();
  const link = await desktop.locator(".pairing-link").getAttribute("href");
  expect(link).toMatch(/\/pair#server=.+&code=cs_pair_/);
  await expect(desktop.getByRole("img", { name: "QR code of the pairing link" })).toBeVisible();
  await shoot(desktop, "settings-add-device");

  const phoneContext = await browser.newContext({ viewport: { width: 375, height: 800 }, isMobile: true, hasTouch: true });
  const phone = await phoneContext.newPage();
  const errors = [];
  phone.on("pageerror", (e) => errors.push(e.message));
  await phone.goto(link);
  await expect(phone.getByRole("heading", { name: "Pair this device" })).toBeVisible();
  await shoot(phone, "phone-pair");
  await phone.getByLabel("Name this device").fill("Sam's phone");
  await phone.getByRole("button", { name: "Pair" }).click();
  await expect(phone.getByRole("banner").getByRole("status")).toHaveText("Live");
  expect(new URL(phone.url()).hash).toBe("");
  const kept = await phone.evaluate(() => Object.values(localStorage).find((v) => v.includes("cs_reviewer_")));
  const phoneKey = JSON.parse(kept).key;
  expect(phoneKey).not.toBe(server.reviewer);

  // The phone decides a plan; the decision records the phone's own key.
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(5));
  const id = created.body.review.confirm.confirm_id;
  await phone.goto(`${server.url}/reviews/${id}`);
  await phone.locator("select#decided-by-role").selectOption("security_officer");
  await phone.getByRole("button", { name: "Approve" }).click();
  await expect(phone.getByRole("status").filter({ hasText: "Decided" })).toContainText("approved by security_officer");
  const devices = (await api(server, server.reviewer, "GET", "/devices")).body.devices;
  const paired = devices.find((d) => d.device === "Sam's phone");
  const stored = await api(server, server.reviewer, "GET", `/reviews/${id}`);
  expect(stored.body.review.deciders.at(-1).key_id).toBe(paired.key_id);

  // The code worked once.
  const again = await phoneContext.newPage();
  await again.goto(link);
  await again.getByRole("button", { name: "Pair" }).click();
  await expect(again.getByRole("status").filter({ hasText: "Not paired" })).toContainText("already used");

  // Revoked on the desktop: the phone's next request is refused.
  await desktop.reload();
  const item = desktop.getByRole("list", { name: "Paired devices" }).getByRole("listitem").filter({ hasText: "Sam's phone" });
  await expect(item).toContainText("last used");
  await shoot(desktop, "settings-devices");
  await item.getByRole("button", { name: "Revoke Sam's phone" }).click();
  await expect(item).toContainText("Revoked");
  expect((await api(server, phoneKey, "GET", "/devices")).status).toBe(401);
  expect(errors).toEqual([]);
  await phoneContext.close();
  await desktop.close();
});
