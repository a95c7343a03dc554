// The app on a real `countersign serve` (SQLite file, demo data): connecting
// with a reviewer key, live updates, deciding, conflicts with another reviewer,
// and a server that goes down. The server is the debug binary the server tests
// built (COUNTERSIGN_BIN overrides), serving dist/ itself.
import { expect, test } from "@playwright/test";
import { api, arriveLate, binary, chooseRole, newPlanReview, shoot, startServer, wcagViolations } from "./support.mjs";
import { spawn, spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROTATION = "c0ffee00-0000-4000-8000-000000000001";
const MIGRATION = "550e8400-e29b-41d4-a716-446655440520";

/** Mints a reviewer key that outlives restarts (demo keys are replaced at each start). */
function mintReviewerKey(dataDir) {
  const run = spawnSync(binary, ["keys", "--data", dataDir, "add", "--kind", "reviewer", "--role", "reviewer", "--label", "e2e"]);
  expect(run.status, String(run.stderr)).toBe(0);
  return String(run.stdout).split("\n")[0];
}

const rows = (page) => page.locator("body:not(.painting)").getByRole("list", { name: "Reviews" }).getByRole("listitem");

let dataDir;
let server;
test.beforeEach(async ({ page }) => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-e2e-"));
  server = await startServer(dataDir);
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.errors = errors;
});
test.afterEach(async ({ page }) => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
  expect(page.errors, "no script errors or panics").toEqual([]);
});

async function connect(page, key = server.reviewer) {
  await page.goto(`${server.url}/settings`);
  await expect(page.getByLabel("Server address")).toHaveValue(server.url);
  await page.getByLabel("Reviewer key").fill(key);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
}

test("a first visit to a server's own desk asks for the reviewer key and never shows the demo", async ({ page }) => {
  // A link to a review, opened in a browser that never saw this desk.
  await page.goto(`${server.url}/reviews/${MIGRATION}`);
  await expect(page).toHaveURL(`${server.url}/settings?next=%2Freviews%2F${MIGRATION}`);
  const welcome = page.getByRole("form", { name: "Connect to this desk's server" });
  await expect(welcome).toContainText(`served by the Countersign server at ${server.url}`);
  await expect(page.getByLabel("Server address")).toHaveValue(server.url);
  expect(await page.evaluate(() => localStorage.getItem("countersign.v1.seeded")), "the demo is not stored").toBeNull();
  await expect(page.locator(".first-paint")).toHaveCount(0);
  expect(await wcagViolations(page)).toEqual([]);
  await shoot(page, "server-first-visit");
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  // Connected, the reviewer is where the link pointed.
  await expect(page).toHaveURL(`${server.url}/reviews/${MIGRATION}`);
  await expect(page.getByRole("heading", { name: "Database Migration Plan", level: 1 })).toBeVisible();
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(7);
  // The server lists what expires first too: the demo's calls, each saying when.
  await expect(rows(page).nth(0)).toContainText(/tool call.*expires in/);
});

test("a reviewer connects with a key, sees the server's reviews live, and decides", async ({ page }) => {
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill("cs_reviewer_wrong");
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByText(/Not connected: this API key is unknown or revoked/)).toBeVisible();
  await connect(page);
  // Connecting leads to the inbox.
  await expect(page).toHaveURL(`${server.url}/`);
  await page.goto(`${server.url}/settings`);
  // The picture shows the page as it settles: live, with the server's devices and webhooks read.
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await expect(page.getByText("No device is paired yet.")).toBeVisible();
  await expect(page.getByText("This server sends no webhooks.", { exact: false })).toBeVisible();
  await shoot(page, "server-settings");
  // The key stays with this tab: not in local storage unless the reviewer asks to remember it.
  const kept = await page.evaluate((key) => ({
    local: Object.values(localStorage).some((v) => v.includes(key)),
    session: Object.values(sessionStorage).some((v) => v.includes(key)),
  }), server.reviewer);
  expect(kept).toEqual({ local: false, session: true });
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(7);

  // An agent submits a plan: it appears without a reload.
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(7));
  expect(created.status).toBe(201);
  await expect(rows(page)).toHaveCount(8);
  await expect(rows(page).nth(7)).toContainText("Delete stale preview environments 7");
  await shoot(page, "server-inbox");

  // Approving on the page is recorded on the server.
  await page.goto(`${server.url}/reviews/${MIGRATION}`);
  await chooseRole(page, "security_officer");
  await page.getByLabel(/^Reason/).fill("Backups verified.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by security_officer" })).toBeVisible();
  const stored = await api(server, server.reviewer, "GET", `/reviews/${MIGRATION}`);
  expect(stored.body.review.confirm.status).toBe("approved");
  expect(stored.body.review.confirm.decisions.at(-1).reason).toBe("Backups verified.");
  expect(stored.body.review.confirm.decisions.at(-1).decided_by_role).toBe("security_officer");

  // The role is picked from the roles the key holds, never typed.
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await expect(page.locator("select#decided-by-role option")).toHaveText(["reviewer", "security_officer", "release_manager"]);
  await shoot(page, "server-review-roles");

  // After a reload the connection (kept in session storage) and the decision are still there.
  await page.goto(`${server.url}/?status=approved`);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await expect(rows(page).filter({ hasText: "Database Migration Plan" })).toHaveCount(1);
});

test("a review opens with one request, and what the reviewer typed stays while changes arrive live", async ({ page }) => {
  await connect(page);
  // The live stream opens late (a slow network or a busy machine).
  await arriveLate(page, "**/api/v1/events*", 1500);
  const asked = [];
  page.on("requestfinished", (request) => request.url().includes("/api/v1/reviews") && asked.push(new URL(request.url())));
  await page.goto(`${server.url}/reviews/${MIGRATION}`);
  await chooseRole(page, "security_officer");
  await page.getByLabel(/^Reason/).fill("Typed while the stream was opening.");
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  // Only this review, and the counts for the header: never the whole list.
  expect(asked.filter((u) => u.pathname === `/api/v1/reviews/${MIGRATION}`)).toHaveLength(1);
  expect(asked.filter((u) => u.pathname === "/api/v1/reviews").map((u) => u.searchParams.get("view"))).toEqual(["summary"]);
  const badge = page.getByRole("link", { name: /^Inbox/ }).locator(".count");
  const before = Number(await badge.textContent());
  // An agent asks for something else: the header counts it; the form is untouched.
  expect((await api(server, server.agent, "POST", "/reviews", newPlanReview(6))).status).toBe(201);
  await expect(badge).toHaveText(String(before + 1));
  await expect(page.getByLabel("Decide as role")).toHaveValue("security_officer");
  await expect(page.getByLabel(/^Reason/)).toHaveValue("Typed while the stream was opening.");

  // Leaving the review and coming back keeps the draft too, until it is saved.
  await page.getByRole("link", { name: "← Inbox" }).click();
  await page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /Database Migration Plan/ }).click();
  await expect(page.getByLabel(/^Reason/)).toHaveValue("Typed while the stream was opening.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by security_officer" })).toBeVisible();
  const stored = await api(server, server.reviewer, "GET", `/reviews/${MIGRATION}`);
  expect(stored.body.review.confirm.decisions.at(-1).reason).toBe("Typed while the stream was opening.");
  await expect(badge).toHaveText(String(before));
});

test("an inbox page the server does not give says why, and the live link and other pages stay", async ({ page }) => {
  await connect(page);
  await page.route((url) => url.pathname === "/api/v1/reviews" && url.searchParams.get("q") === "boom",
    (route) => route.abort("connectionrefused"));
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(7);
  // The search box is the app's: the first paint's is a picture of it.
  await expect(page.locator(".first-paint")).toHaveCount(0);
  await page.getByLabel("Search reviews").fill("boom");
  await expect(page.getByRole("alert").filter({ hasText: "This page of the inbox could not be listed" })).toBeVisible();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await page.getByLabel("Search reviews").fill("");
  await expect(rows(page)).toHaveCount(7);
  await expect(page.getByRole("alert").filter({ hasText: "could not be listed" })).toHaveCount(0);
});

test("when another reviewer decided first, the page says who and what, and nothing is overwritten", async ({ page }) => {
  await connect(page);
  // Someone else rejects while this page is open; without the live stream this page does not know yet.
  await page.route("**/api/v1/events**", (route) => route.abort());
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await expect(page.getByRole("button", { name: "Approve" })).toBeEnabled();
  const other = await api(server, server.reviewer, "POST", `/reviews/${ROTATION}/decisions`,
    { status: "rejected", decided_by_role: "security_officer", reason: "Freeze week" }, { "Idempotency-Key": "other-1" });
  expect(other.status).toBe(200);
  await chooseRole(page, "reviewer");
  await page.getByRole("button", { name: "Approve" }).click();
  const stored = await api(server, server.reviewer, "GET", `/reviews/${ROTATION}`);
  expect(stored.body.review.confirm.decisions).toHaveLength(1);
  expect(stored.body.review.confirm.status).toBe("rejected");
  // Who: the key's owner (a signed-in person's name where one decided), and as what.
  const [decider] = stored.body.review.deciders;
  const alert = page.getByRole("alert").filter({ hasText: "Someone decided first" });
  await expect(alert).toContainText(`rejected by ${decider.owner ?? decider.key_id} as security_officer`);
  await expect(alert).toContainText("Freeze week");
  await shoot(page, "server-conflict");
});

test("a server that goes down is shown, and the decision typed meanwhile is kept", async ({ page }) => {
  await connect(page);
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await expect(page.getByRole("button", { name: "Reject" })).toBeEnabled();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  const url = server.url;
  await server.stop();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Reconnecting…");
  await page.getByLabel(/^Reason/).fill("Too broad for one window");
  await page.getByRole("button", { name: "Reject" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Queued on this device" })).toContainText("Too broad for one window");
  await shoot(page, "server-offline");
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByLabel("Server address").fill(url);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByText(/Not connected: the server at .* could not be reached; nothing was sent or changed/)).toBeVisible();
});

test("while the server is being checked, Connect says so and cannot be clicked twice", async ({ page }) => {
  await page.goto(`${server.url}/settings`);
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let checks = 0;
  await page.route("**/api/v1/**", async (route) => {
    checks += 1;
    await held;
    await route.continue();
  });
  await page.getByLabel("Reviewer key").fill("cs_reviewer_wrong");
  const button = page.getByRole("button", { name: "Connect", exact: true });
  await button.click();
  await expect(page.getByText("Checking the server…")).toBeVisible();
  await expect(button).toBeDisabled();
  const asked = checks;
  await button.click({ force: true });
  release();
  await expect(page.getByText(/Not connected: this API key is unknown or revoked/)).toBeVisible();
  await expect(button).toBeEnabled();
  expect(checks, "the disabled button sent nothing more").toBe(asked);
  // A form that lacks the key is stopped before anything is sent.
  await page.getByLabel("Reviewer key").fill("");
  await button.click();
  await expect(page.getByText("Give the server's address and your reviewer key.")).toBeVisible();
  expect(checks).toBe(asked);
});

test("an agent's plan appears live, the reviewer approves it in the browser, and the waiting agent prints approved", async ({ page }) => {
  await connect(page);
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(7);
  const planFile = join(dataDir, "plan.json");
  writeFileSync(planFile, JSON.stringify(newPlanReview(8).target.plan));
  const agent = spawn(binary, ["agent", "--server", server.url, "submit", planFile, "--role", "cleanup-agent", "--wait", "--timeout", "60"], {
    env: { ...process.env, COUNTERSIGN_AGENT_KEY: server.agent },
  });
  let stdout = "";
  agent.stdout.on("data", (d) => (stdout += d));
  const exited = new Promise((resolve) => agent.on("exit", resolve));
  await expect(rows(page)).toHaveCount(8);
  await page.getByRole("link", { name: /Delete stale preview environments 8/ }).click();
  await page.getByLabel(/^Reason/).fill("Idle for weeks; fine to delete.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by reviewer" })).toBeVisible();
  expect(await exited).toBe(0);
  expect(stdout).toContain(" approved by reviewer: Idle for weeks; fine to delete.");
});

test("two reviewers decide the same review at once: one wins, the other sees the conflict", async ({ browser }) => {
  const pages = [];
  for (let i = 0; i < 2; i++) {
    const page = await (await browser.newContext()).newPage();
    await connect(page);
    // Neither page hears of the other's decision before deciding.
    await page.route("**/api/v1/events**", (route) => route.abort());
    await page.goto(`${server.url}/reviews/${ROTATION}`);
    await page.getByLabel(/^Reason/).fill(i === 0 ? "First reviewer says no" : "Second reviewer says no");
    pages.push(page);
  }
  await Promise.all(pages.map((page) => page.getByRole("button", { name: "Reject" }).click()));
  const conflicts = [];
  for (const page of pages) {
    const decided = page.getByRole("status").filter({ hasText: /rejected by reviewer/ });
    await expect(decided).toBeVisible();
    conflicts.push(await page.getByRole("alert").filter({ hasText: "Someone decided first" }).count());
  }
  expect(conflicts.sort()).toEqual([0, 1]);
  const stored = await api(server, server.reviewer, "GET", `/reviews/${ROTATION}`);
  expect(stored.body.review.confirm.decisions).toHaveLength(1);
  await shoot(pages[conflicts.indexOf(1)], "server-two-reviewers");
  for (const page of pages) await page.context().close();
});

test("the live stream opens with single-use tickets, never the key, and after a restart resumes with a fresh one", async ({ page }) => {
  const key = mintReviewerKey(dataDir);
  const urls = [];
  page.on("request", (r) => urls.push(r.url()));
  await connect(page, key);
  await page.goto(`${server.url}/`);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  const address = server.url.replace("http://", "");
  await server.stop();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Reconnecting…");
  server = await startServer(dataDir, address);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live", { timeout: 20_000 });
  // A change made after the restart arrives on the reopened stream.
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(8));
  expect(created.status).toBe(201);
  await expect(rows(page).filter({ hasText: "Delete stale preview environments 8" })).toHaveCount(1);
  expect(urls.filter((u) => u.includes(key)), "the key is in no URL").toEqual([]);
  const tickets = urls.filter((u) => u.includes("/api/v1/events?")).map((u) => new URL(u).searchParams.get("ticket"));
  expect(tickets.length).toBeGreaterThanOrEqual(2);
  expect(new Set(tickets).size, "each stream its own ticket").toBe(tickets.length);
});

test("a decision made while the server is down is queued and delivered exactly once after the restart", async ({ page }) => {
  const key = mintReviewerKey(dataDir);
  await connect(page, key);
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await expect(page.getByRole("button", { name: "Reject" })).toBeEnabled();
  // The server's policy and the key's roles are read (the role is picked from them) before it stops.
  await expect(page.locator("select#decided-by-role")).toBeVisible();
  const address = server.url.replace("http://", "");
  await server.stop();
  await page.getByLabel(/^Reason/).fill("Not during the freeze");
  await page.getByRole("button", { name: "Reject" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Queued on this device" })).toContainText("Not during the freeze");
  const queued = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.outbox.")));
  expect(queued).toEqual([`countersign.v1.outbox.${ROTATION}`]);
  await shoot(page, "server-queued");
  server = await startServer(dataDir, address);
  await expect(page.getByRole("status").filter({ hasText: "rejected by reviewer" })).toBeVisible({ timeout: 20000 });
  const stored = await api(server, key, "GET", `/reviews/${ROTATION}`);
  expect(stored.body.review.confirm.decisions).toHaveLength(1);
  expect(stored.body.review.confirm.decisions[0].reason).toBe("Not during the freeze");
  expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.outbox.")))).toEqual([]);
  await page.reload();
  await expect(page.getByRole("status").filter({ hasText: "rejected by reviewer" })).toBeVisible();
  expect((await api(server, key, "GET", `/reviews/${ROTATION}`)).body.review.confirm.decisions).toHaveLength(1);
});

test("a udspy agent's confirmation is decided in the browser: approved, edited, rejected, and a forged receipt refused", async ({ page }) => {
  const python = process.env.UDSPY_PYTHON ?? ".venv-udspy/bin/python";
  await connect(page);
  await page.goto(`${server.url}/?type=other`);
  // The agent checks each approval's receipt offline with the server's key.
  const trusted = (await api(server, server.agent, "GET", "/signing-key")).body.public_key;
  const run = (path, publicKey = trusted) => {
    const agent = spawn(python, ["examples/udspy/agent.py", server.url, path], {
      env: { ...process.env, COUNTERSIGN_AGENT_KEY: server.agent, COUNTERSIGN_PUBLIC_KEY: publicKey, PYTHONPATH: "examples/udspy" },
    });
    let stdout = "", stderr = "";
    agent.stdout.on("data", (d) => (stdout += d));
    agent.stderr.on("data", (d) => (stderr += d));
    return new Promise((resolve) => agent.on("exit", (code) => resolve({ code, stdout, stderr })));
  };
  // Opens the agent's request once the server holds it, so the page's first
  // load lists it (the live stream is another test's subject).
  const open = async (name) => {
    await expect(async () => {
      const listed = await api(server, server.reviewer, "GET", "/reviews?status=pending&q=report");
      expect(JSON.stringify(listed.body.items)).toMatch(name);
    }).toPass({ timeout: 20000 });
    await page.goto(`${server.url}/?type=other`);
    await page.getByRole("link", { name }).click();
    await expect(page.getByRole("heading", { name: "Tool call archive_file" })).toBeVisible();
  };
  const result = async (exited) => {
    const { code, stdout, stderr } = await exited;
    expect(code, stderr).toBe(0);
    return JSON.parse(stdout.trim().split("\n").pop());
  };

  const approved = run("/data/report-a.txt");
  await open(/report-a\.txt/);
  await page.getByRole("button", { name: "Approve once" }).click();
  expect(await result(approved)).toMatchObject({ status: "approved", ran: [{ path: "/data/report-a.txt", keep_days: 30 }] });

  const edited = run("/data/report-b.txt");
  await open(/report-b\.txt/);
  await page.getByLabel("Approve with modifications").check();
  await page.getByLabel(/Arguments to approve/).fill('{"path": "/archive/report-b.txt", "keep_days": 7}');
  await page.getByRole("button", { name: "Approve edited call" }).click();
  expect(await result(edited)).toMatchObject({ status: "edited", ran: [{ path: "/archive/report-b.txt", keep_days: 7 }] });

  const rejected = run("/data/report-c.txt");
  await open(/report-c\.txt/);
  await page.getByLabel(/^Reason or feedback/).fill("Keep it online until the audit");
  await page.getByRole("button", { name: "Deny" }).click();
  expect(await result(rejected)).toMatchObject({ status: "rejected", reason: "Keep it online until the audit", ran: [] });
  await shoot(page, "udspy-rejected");

  // Trusting another key, the agent refuses the approval and spends nothing.
  const other = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64");
  const forged = run("/data/report-d.txt", other);
  await open(/report-d\.txt/);
  await page.getByRole("button", { name: "Approve once" }).click();
  const refused = await result(forged);
  expect(refused).toMatchObject({ status: "refused", ran: [] });
  expect(refused.error).toContain("the receipt was not signed by the trusted key");
  const stored = await api(server, server.reviewer, "GET", "/reviews?status=approved&q=report-d");
  expect(stored.body.items[0].confirm.events.map((e) => e.event_type)).not.toContain("token.redeemed");
});

test("a standing approval is listed with its use, revoked in the browser, and the agent's next call is asked again", async ({ page }) => {
  // Without a server (the app on a static host) the page says where grants are kept.
  await page.goto("/grants");
  await expect(page.getByText(/Standing approvals are kept by a Countersign server/)).toBeVisible();

  const call = {
    requestedByRole: "payments-agent", sessionId: "sess-ledger", runId: "run-1", workspace: "acme",
    toolCall: { name: "wire_transfer", args: { amount: 75, to: "Cloud Co" } },
    humanSummary: "Pay the cloud bill", riskTier: "R2",
  };
  const asked = await api(server, server.agent, "POST", "/tool-calls", call);
  expect(asked.status).toBe(201);
  const id = asked.body.outcome.confirm_id;
  const approved = await api(server, server.reviewer, "POST", `/reviews/${id}/decisions`,
    { status: "approved", decided_by_role: "reviewer", tool_call: { mode: "scope", scope: "session" } },
    { "Idempotency-Key": "ledger-1" });
  expect(approved.status).toBe(200);
  const again = await api(server, server.agent, "POST", "/tool-calls", call);
  expect(again.body.outcome.outcome).toBe("APPROVED");

  await connect(page);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Grants" }).click();
  const live = page.getByRole("list", { name: "Standing approvals" }).getByRole("listitem");
  await expect(live).toHaveCount(1);
  await expect(live.first()).toContainText("wire_transfer with these exact arguments");
  await expect(live.first()).toContainText("for this session, session sess-ledger");
  // The demo reviewer key has no owner: the page names the key.
  await expect(live.first()).toContainText(/Granted by key_\S+ as reviewer/);
  await expect(live.first()).toContainText("let 1 call through");
  expect(await wcagViolations(page), "grants at 1280 px").toEqual([]);
  await shoot(page, "grants");

  await live.first().getByRole("button", { name: "Revoke the approval of wire_transfer for this session" }).click();
  const ended = page.getByRole("list", { name: "Revoked or ended approvals" }).getByRole("listitem");
  await expect(ended.first()).toContainText(/Revoked just now by key_/);
  await expect(page.getByText("No standing approvals: every call is asked.")).toBeVisible();
  await page.setViewportSize({ width: 375, height: 800 });
  expect(await wcagViolations(page), "revoked grants at 375 px").toEqual([]);
  await shoot(page, "grants-revoked");

  const third = await api(server, server.agent, "POST", "/tool-calls", call);
  expect(third.status).toBe(201);
  expect(third.body.outcome.outcome).toBe("TOOL_BLOCKED_PENDING_APPROVAL");
});
