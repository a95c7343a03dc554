// The app on a real `countersign serve` (SQLite file, demo data): connecting
// with a reviewer key, live updates, deciding, conflicts with another reviewer,
// and a server that goes down. The server is the debug binary the server tests
// built (COUNTERSIGN_BIN overrides), serving dist/ itself.
import { expect, test } from "@playwright/test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const shots = "tests/e2e/output/screenshots";
const binary = process.env.COUNTERSIGN_BIN ?? "target/debug/countersign";
const ROTATION = "c0ffee00-0000-4000-8000-000000000001";
const MIGRATION = "550e8400-e29b-41d4-a716-446655440520";

/** Starts the server; resolves with its URL, keys, and a stop function. */
async function startServer(dataDir) {
  const child = spawn(binary, ["serve", "--demo", "--listen", "127.0.0.1:0", "--app-dir", "dist", "--data", dataDir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const server = { child, stop: () => new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : (child.once("exit", r), child.kill("SIGKILL")))) };
  await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`countersign serve exited with ${code}`)));
    lines.on("line", (line) => {
      if (line.startsWith("countersign: listening on ")) server.url = line.slice("countersign: listening on ".length);
      if (line.startsWith("Demo reviewer key")) server.reviewer = line.split(" ").pop();
      if (line.startsWith("Demo agent key")) server.agent = line.split(" ").pop();
      if (server.url && server.reviewer && server.agent) resolve();
    });
  });
  return server;
}

async function api(server, key, method, path, body, headers = {}) {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json() };
}

async function shoot(page, name) {
  for (const [label, viewport] of [["desktop", { width: 1280, height: 900 }], ["phone", { width: 375, height: 800 }]]) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${shots}/${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

const rows = (page) => page.getByRole("list", { name: "Reviews" }).getByRole("listitem");

function newPlanReview(n) {
  const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
  const plan = `${n}0000000-2222-4222-8222-222222222222`;
  return {
    confirm: {
      meta, confirm_id: `${n}0000000-1111-4111-8111-111111111111`, target_type: "plan", target_id: plan, status: "pending",
      requested_by_role: "cleanup-agent", requested_at: new Date().toISOString(), reason: "Nightly cleanup",
    },
    target: { plan: {
      meta, plan_id: plan, context_id: "33333333-3333-4333-8333-333333333333", title: `Delete stale preview environments ${n}`,
      objective: "Free the preview cluster", status: "proposed",
      steps: [{ step_id: `${n}0000000-5555-4555-8555-555555555555`, description: "Delete environments idle for 14 days", status: "pending", dependencies: [] }],
    } },
  };
}

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

async function connect(page) {
  await page.goto(`${server.url}/settings`);
  await expect(page.getByLabel("Server address")).toHaveValue(server.url);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect" }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
}

test("a reviewer connects with a key, sees the server's reviews live, and decides", async ({ page }) => {
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill("cs_reviewer_wrong");
  await page.getByRole("button", { name: "Connect" }).click();
  await expect(page.getByText(/Not connected: this API key is unknown or revoked/)).toBeVisible();
  await connect(page);
  await shoot(page, "server-settings");
  await page.goto(`${server.url}/`);
  await expect(rows(page)).toHaveCount(3);

  // An agent submits a plan: it appears without a reload.
  const created = await api(server, server.agent, "POST", "/reviews", newPlanReview(7));
  expect(created.status).toBe(201);
  await expect(rows(page)).toHaveCount(4);
  await expect(rows(page).nth(3)).toContainText("Delete stale preview environments 7");
  await shoot(page, "server-inbox");

  // Approving on the page is recorded on the server.
  await page.goto(`${server.url}/reviews/${MIGRATION}`);
  await page.getByLabel("Decide as role").fill("security_officer");
  await page.getByLabel(/^Reason/).fill("Backups verified.");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by security_officer" })).toBeVisible();
  const stored = await api(server, server.reviewer, "GET", `/reviews/${MIGRATION}`);
  expect(stored.body.review.confirm.status).toBe("approved");
  expect(stored.body.review.confirm.decisions.at(-1).reason).toBe("Backups verified.");
  expect(stored.body.review.confirm.decisions.at(-1).decided_by_role).toBe("security_officer");

  // A role the key may not sign as is refused next to the field; nothing is stored.
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await page.getByLabel("Decide as role").fill("ceo");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.locator("#role-error")).toContainText("not a role this key may sign as");
  expect((await api(server, server.reviewer, "GET", `/reviews/${ROTATION}`)).body.review.confirm.status).toBe("pending");
  await shoot(page, "server-review-refused");

  // After a reload the connection (kept in session storage) and the decision are still there.
  await page.goto(`${server.url}/?status=approved`);
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await expect(rows(page).filter({ hasText: "Database Migration Plan" })).toHaveCount(1);
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
  await page.getByLabel("Decide as role").fill("reviewer");
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "Someone decided first" })).toContainText("rejected by security_officer");
  await expect(page.getByRole("alert").filter({ hasText: "Someone decided first" })).toContainText("Freeze week");
  const stored = await api(server, server.reviewer, "GET", `/reviews/${ROTATION}`);
  expect(stored.body.review.confirm.decisions).toHaveLength(1);
  expect(stored.body.review.confirm.status).toBe("rejected");
  await shoot(page, "server-conflict");
});

test("a server that goes down is shown, and a decision typed meanwhile is kept on screen", async ({ page }) => {
  await connect(page);
  await page.goto(`${server.url}/reviews/${ROTATION}`);
  await expect(page.getByRole("button", { name: "Reject" })).toBeEnabled();
  await page.route("**/api/v1/**", (route) => route.abort("connectionrefused"));
  await server.stop();
  await page.getByLabel(/^Reason/).fill("Too broad for one window");
  await page.getByRole("button", { name: "Reject" }).click();
  await expect(page.getByText(/could not be reached; nothing was sent or changed/)).toBeVisible();
  await expect(page.getByLabel(/^Reason/)).toHaveValue("Too broad for one window");
  await expect(page.getByRole("banner").getByRole("status")).not.toHaveText("Live");
  await shoot(page, "server-offline");
});
