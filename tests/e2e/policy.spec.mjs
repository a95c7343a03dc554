// Approval policies in the browser, on a real `countersign serve --policy`:
// two reviewers in two browser contexts with their own keys meet a 2-of-3
// quorum with a required role; the page shows where the request stands, and
// what the rule refuses (the same person twice, a required role crowded out)
// is refused in the browser before anything is sent.
import { expect, test } from "@playwright/test";
import { api, binary, chooseRole, shoot, startServer } from "./support.mjs";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const POLICY = `
[[rule]]
name = "payments"
tool = "payments.*"
risk = ["R3", "R4"]
approvals = 2
required_roles = ["release_manager"]
`;

function mint(dataDir, kind, owner, roles = []) {
  const args = ["keys", "--data", dataDir, "add", "--kind", kind, "--owner", owner, ...roles.flatMap((r) => ["--role", r])];
  const run = spawnSync(binary, args);
  expect(run.status, String(run.stderr)).toBe(0);
  return String(run.stdout).split("\n")[0];
}

let dataDir;
let server;
let keys;
test.beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-policy-"));
  writeFileSync(join(dataDir, "policy.toml"), POLICY);
  const roles = ["security_officer", "release_manager"];
  // Only `serve` makes the database: the keys are minted into the running server's.
  server = await startServer(dataDir, "127.0.0.1:0", { demo: false, extra: ["--policy", join(dataDir, "policy.toml")] });
  keys = {
    agent: mint(dataDir, "agent", "alice"),
    bob: mint(dataDir, "reviewer", "bob", roles),
    carol: mint(dataDir, "reviewer", "carol", roles),
    dave: mint(dataDir, "reviewer", "dave", roles),
  };
});
test.afterEach(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A page in its own browser context, connected with `key`. */
async function reviewer(browser, key) {
  const page = await (await browser.newContext()).newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.decisionsSent = 0;
  page.on("request", (r) => {
    if (r.method() === "POST" && r.url().includes("/decisions")) page.decisionsSent += 1;
  });
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill(key);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  return page;
}

async function approveAs(page, role) {
  await chooseRole(page, role);
  await page.getByRole("button", { name: "Approve once" }).click();
}

test("two reviewers meet a 2-of-3 quorum with a required role; the rule's refusals happen in the browser", async ({ browser }) => {
  const asked = await api(server, keys.agent, "POST", "/tool-calls", {
    requestedByRole: "payments-agent",
    sessionId: "s1",
    runId: "r1",
    toolCall: { name: "payments.refund", args: { order: "A-1001", amount: 4200 } },
    humanSummary: "Refund order A-1001 (4,200 EUR)",
    riskTier: "R4",
  });
  expect(asked.status).toBe(201);
  const id = asked.body.outcome.confirm_id;
  const standing = (page) => page.locator(".quorum .standing");

  const bob = await reviewer(browser, keys.bob);
  await bob.goto(`${server.url}/reviews/${id}`);
  await expect(standing(bob)).toHaveText("0 of 2 approvals — needs 2 more, including release_manager");
  await expect(bob.locator(".quorum")).toContainText("the owner of the asking agent may not approve");
  await approveAs(bob, "security_officer");
  await expect(standing(bob)).toHaveText("1 of 2 approvals — approved by `bob` as security_officer; needs one more from release_manager");
  await expect(bob.getByRole("button", { name: "Approve once" })).toBeVisible();
  expect(bob.decisionsSent).toBe(1);

  // Bob again, under another role: refused here, nothing sent.
  await approveAs(bob, "release_manager");
  await expect(bob.getByRole("alert").filter({ hasText: "`bob` already approved this request" })).toBeVisible();
  expect(bob.decisionsSent).toBe(1);

  const carol = await reviewer(browser, keys.carol);
  await carol.goto(`${server.url}/reviews/${id}`);
  await expect(standing(carol)).toContainText("approved by `bob` as security_officer");
  // A second security officer would leave no room for the release manager.
  await approveAs(carol, "security_officer");
  await expect(carol.locator("#role-error")).toContainText("rule `payments` still needs an approval from release_manager");
  expect(carol.decisionsSent).toBe(0);
  await shoot(carol, "policy-quorum");
  await approveAs(carol, "release_manager");
  await expect(carol.getByRole("status").filter({ hasText: /approved by release_manager/ })).toBeVisible();
  await expect(standing(carol)).toHaveText("2 of 2 approvals — approved by `bob` as security_officer, `carol` as release_manager");
  await expect(carol.locator(".timeline")).toContainText("approved by security_officer (bob)");
  await expect(carol.locator(".timeline")).toContainText("approved by release_manager (carol)");
  // Bob's page hears of it live.
  await expect(bob.getByRole("heading", { name: "Decided" })).toBeVisible();
  await shoot(carol, "policy-quorum-met");

  const stored = await api(server, keys.dave, "GET", `/reviews/${id}`);
  expect(stored.body.review.confirm.status).toBe("approved");
  expect(stored.body.outcome.receipt.body.rule).toBe("payments");
  expect(stored.body.outcome.receipt.body.decisions.map((d) => d.decided_by_owner)).toEqual(["bob", "carol"]);
  for (const page of [bob, carol]) {
    expect(page.errors, "no script errors or panics").toEqual([]);
    await page.context().close();
  }
});
