// One reviewer contract, three backends: this browser's local storage, a
// Countersign server (`countersign serve`) and a LangGraph server (`langgraph
// dev`). The same steps run against each: a pending tool call is listed and
// counted, opened, refused without a reason (nothing recorded), then decided;
// it leaves the Pending tab, the count follows, and after a reload the
// backend still says what was decided.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { api, failOnScriptErrors, interruptedThread, startLangGraph, startServer } from "./support.mjs";

failOnScriptErrors();
test.describe.configure({ mode: "serial", timeout: 120_000 });

/** How each backend is reached, and how a pending `wire_transfer` comes to wait on it. */
const backends = {
  "local storage": {
    async start() {
      return { stop() {} };
    },
    async connect() {},
    // The demo's wire transfer.
    async pending() {
      return "wire_transfer";
    },
  },
  "a Countersign server": {
    async start() {
      const dataDir = mkdtempSync(join(tmpdir(), "countersign-contract-"));
      const server = await startServer(dataDir);
      return { ...server, stop: async () => (await server.stop(), rmSync(dataDir, { recursive: true, force: true })) };
    },
    // The server serves the app: the browser asks its own origin.
    base: (server) => server.url,
    async connect(page, server) {
      await page.goto(`${server.url}/settings`);
      await page.getByLabel("Reviewer key").fill(server.reviewer);
      await page.getByRole("button", { name: "Connect", exact: true }).click();
      // Connecting leads to the inbox, whose first paint draws a top bar of its own until the app takes over.
      await expect(page.locator('.link-state[data-state="live"]')).toHaveText("Live", { timeout: 15_000 });
    },
    async pending(server) {
      const session = `contract-${Date.now()}`;
      const asked = await api(server, server.agent, "POST", "/tool-calls", {
        requestedByRole: "payments-agent", sessionId: session, runId: "run-1",
        toolCall: { name: "wire_transfer", args: { amount: 1200, currency: "EUR", to: "ACME GmbH" } },
        humanSummary: `Pay invoice ${session}`, riskTier: "R3", riskReasons: ["moves money"],
      });
      expect(asked.status, JSON.stringify(asked.body)).toBe(201);
      return session;
    },
  },
  "a LangGraph server": {
    start: startLangGraph,
    async connect(page, server) {
      await page.goto("/settings");
      await page.getByLabel("Kind of server").selectOption("langgraph");
      await page.getByLabel("Server address").fill(server.url);
      await page.getByRole("button", { name: "Connect" }).click();
      await expect(page.locator(".link-state")).toHaveText("Refreshing every 3 s", { timeout: 15_000 });
    },
    async pending(server) {
      return interruptedThread(server, "middleware");
    },
  },
};

const pendingBadge = (page) => page.getByRole("navigation", { name: "Main" }).locator(".count");
const pendingNow = async (page) => Number(await pendingBadge(page).textContent());

for (const [name, backend] of Object.entries(backends)) {
  test.describe(`on ${name}`, () => {
    let server;
    test.beforeAll(async () => {
      server = await backend.start();
    });
    test.afterAll(async () => server?.stop());

    test("a pending call is listed, refused without a reason, then denied with one; the decision stands after a reload", async ({ page }) => {
      const at = (path) => `${backend.base?.(server) ?? ""}${path}`;
      await backend.connect(page, server);
      const search = await backend.pending(server);
      await page.goto(at(`/?q=${encodeURIComponent(search)}`));
      const row = page.getByRole("link", { name: /wire_transfer:/ });
      await expect(row).toHaveCount(1, { timeout: 15_000 });
      const before = await pendingNow(page);
      expect(before).toBeGreaterThan(0);

      await row.click();
      await expect(page.getByRole("heading", { name: "Tool call wire_transfer" })).toBeVisible();
      const deny = page.getByRole("button", { name: /^(Deny|Reject)$/ });
      await deny.click();
      await expect(page.getByRole("alert").filter({ hasText: /reason/i })).toBeVisible();
      await expect(pendingBadge(page)).toHaveText(String(before));

      await page.getByLabel(/^Reason/).fill("Not before the quarter closes.");
      await deny.click();
      await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible({ timeout: 15_000 });
      await expect(page.locator(".decided")).toContainText("rejected");
      await expect(pendingBadge(page)).toHaveText(String(before - 1));

      await page.goto(at(`/?q=${encodeURIComponent(search)}`));
      await expect(page.getByRole("link", { name: /wire_transfer:/ })).toHaveCount(0);
      await page.goto(at(`/?q=${encodeURIComponent(search)}&status=all`));
      await expect(page.getByRole("list", { name: "Reviews" }).locator(".status-rejected")).toHaveCount(1, { timeout: 15_000 });
      await page.reload();
      await expect(page.getByRole("list", { name: "Reviews" }).locator(".status-rejected")).toHaveCount(1, { timeout: 15_000 });
      await page.getByRole("link", { name: /wire_transfer:/ }).click();
      await expect(page.getByRole("list", { name: "Decision history" })).toContainText("Not before the quarter closes.");
    });
  });
}
