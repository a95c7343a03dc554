// Tool-call approvals in the browser (local storage: tokens minted and checked
// here): the exact call and the summary check, approval with modifications
// (the token's hash is the edited call's canonical hash), redeeming, an expired
// request that cannot be approved, and a group decision with a token per call.
import { createHash } from "node:crypto";
import { expect, test } from "@playwright/test";
import { failOnScriptErrors, shoot } from "./support.mjs";

const WIRE = "/reviews/c0ffee00-0000-4000-8000-000000002002";
const DELETE = "/reviews/c0ffee00-0000-4000-8000-000000002004";

failOnScriptErrors();

// RFC 8785 for the plain values these tests use (strings, integers, objects).
const canonical = (v) =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(",")}]`
    : v && typeof v === "object"
      ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`
      : JSON.stringify(v);
const sha256 = (text) => createHash("sha256").update(text).digest("hex");
const stored = (page, id) => page.evaluate((id) => JSON.parse(localStorage.getItem(`countersign.v1.review.${id}`)), id);

test("a tool call shows the exact call, the risk, and quietly what its summary leaves out", async ({ page }) => {
  await page.goto(DELETE);
  await expect(page.getByRole("heading", { name: "Tool call delete_files" })).toBeVisible();
  await expect(page.getByLabel("Exact call (canonical JSON)")).toContainText('"/etc/nginx"');
  await expect(page.getByText("Risk R3")).toBeVisible();
  // Leaving a value out is a note, not an alarm: red is kept for a summary that contradicts the call.
  const note = page.locator(".summary-note");
  await expect(note).toContainText("The summary does not mention");
  await expect(note).toContainText("paths/1");
  await expect(note).toContainText("/etc/nginx");
  await expect(page.locator(".summary-bad")).toHaveCount(0);
  await expect(page.getByRole("timer")).toContainText("Expires in");
  await shoot(page, "tool-call-review");
  await page.goto(WIRE);
  await expect(page.getByText("✓ Checked: the summary names the tool")).toBeVisible();
  await page.getByRole("button", { name: "Dry run" }).click();
  await expect(page.getByLabel("Dry-run report")).toContainText("would debit 25,000.00 EUR");
});

test("approving with modifications tokens the edited call, which can be redeemed once", async ({ page }) => {
  await page.goto(WIRE);
  await page.getByLabel("Approve with modifications").check();
  const editor = page.getByLabel(/Arguments to approve/);
  await editor.fill('{ "amount": 2500, ');
  await expect(page.getByRole("alert").filter({ hasText: /Line 1, column/ })).toBeVisible();
  const edited = { amount: 2500, currency: "EUR", iban: "DE89370400440532013000", to: "ACME GmbH" };
  await editor.fill(JSON.stringify(edited, null, 2));
  const call = canonical({ name: "wire_transfer", args: edited });
  const hash = sha256(call);
  await expect(page.getByText(`New SHA-256 ${hash}`)).toBeVisible();
  await expect(page.getByLabel("Changes from the call as asked")).toContainText('- "amount": 25000,');
  await expect(page.getByLabel("Changes from the call as asked")).toContainText('+ "amount": 2500,');
  await shoot(page, "tool-call-edit");
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByText("Approved with modifications")).toBeVisible();
  const review = await stored(page, "c0ffee00-0000-4000-8000-000000002002");
  const outcome = review.target.tool_call.outcome;
  expect(outcome.kind).toBe("edited");
  expect(outcome.approvedCall).toBe(call);
  expect(outcome.approvedHash).toBe(hash);
  expect(outcome.token.toolCallHash).toBe(hash);
  expect(outcome.originalHash).toBe(review.target.tool_call.request.toolCallHash);
  expect(outcome.originalHash).not.toBe(hash);

  // The original call is refused; the edited one runs once.
  const redeemCall = page.getByLabel("Call about to run");
  await redeemCall.fill(JSON.stringify({ name: "wire_transfer", args: { ...edited, amount: 25000 } }));
  await page.getByRole("button", { name: "Redeem" }).click();
  await expect(page.getByText(/Refused: .*token_hash_mismatch/)).toBeVisible();
  await redeemCall.fill(JSON.stringify({ name: "wire_transfer", args: edited }));
  await page.getByRole("button", { name: "Redeem" }).click();
  await expect(page.getByText(/used at/)).toBeVisible();
  expect((await stored(page, "c0ffee00-0000-4000-8000-000000002002")).target.tool_call.outcome.token.usedAt).toBeTruthy();
  await page.getByRole("button", { name: "Redeem" }).click();
  await expect(page.getByText(/Refused: .*token_used/)).toBeVisible();
  await shoot(page, "tool-call-approved");
});

test("cancelling asks once more, saying what the agent receives, and closes the call unread", async ({ page }) => {
  await page.goto(DELETE);
  // Every button says what the agent gets.
  await expect(page.getByRole("button", { name: "Deny" })).toHaveAccessibleDescription(/agent is told it was denied, with your reason/);
  await expect(page.getByRole("button", { name: "Send feedback" })).toHaveAccessibleDescription(/gets your text as feedback/);
  await expect(page.getByRole("button", { name: "Cancel request" })).toHaveAccessibleDescription(/told it was cancelled, with no reason/);
  await page.getByRole("button", { name: "Cancel request" }).click();
  const question = page.getByRole("group", { name: /Cancel this request\?/ });
  await expect(question).toBeVisible();
  await expect(page.getByRole("button", { name: "Approve once" })).toBeHidden();
  await shoot(page, "tool-call-cancel-confirm");
  // Keeping it changes nothing.
  await question.getByRole("button", { name: "Keep it" }).click();
  await expect(page.getByRole("button", { name: "Approve once" })).toBeVisible();
  expect((await stored(page, "c0ffee00-0000-4000-8000-000000002004")).confirm.status).toBe("pending");
  await page.getByRole("button", { name: "Cancel request" }).click();
  await page.getByRole("button", { name: "Yes, cancel request" }).click();
  await expect(page.getByRole("button", { name: "Approve once" })).toHaveCount(0);
  const review = await stored(page, "c0ffee00-0000-4000-8000-000000002004");
  expect(review.confirm.status).toBe("cancelled");
  expect(review.target.tool_call.outcome.kind).toBe("cancelled");
  expect(review.target.tool_call.outcome.reason ?? null).toBeNull();
  expect(review.target.tool_call.outcome.token).toBeUndefined();
});

test("an expired request cannot be approved and is closed as denied", async ({ page }) => {
  await page.goto("/import");
  // Time to import and open it on a loaded machine before it expires.
  const expiresAt = new Date(Date.now() + 10_000).toISOString();
  const request = {
    approvalId: "bbbbbbbb-0000-4000-8000-000000000001", requestedByRole: "ops-agent", sessionId: "s-exp", runId: "r-1",
    toolCall: { name: "restart_service", args: { service: "billing" } }, humanSummary: "restart_service billing",
    riskTier: "R2", expiresAt,
  };
  await page.getByLabel("Or paste JSON").fill(JSON.stringify(request));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();
  await page.goto("/?type=other");
  await page.getByRole("link", { name: /restart_service/ }).click();
  await expect(page.getByRole("button", { name: "Approve once" })).toBeEnabled();
  await expect(page.getByText("This request has expired")).toBeVisible({ timeout: 20_000 });
  await expect(page.getByText("Expired: denied by default")).toBeVisible({ timeout: 10_000 });
  const review = await page.evaluate(() => {
    // The review's own key (the inbox index holds its summary too).
    const key = Object.keys(localStorage).find((k) => k.startsWith("countersign.v1.review.") && localStorage.getItem(k).includes("restart_service"));
    return JSON.parse(localStorage.getItem(key));
  });
  expect(review.confirm.status).toBe("cancelled");
  expect(review.target.tool_call.outcome.kind).toBe("expired");
  expect(review.target.tool_call.outcome.token).toBeUndefined();
});

test("a group of similar calls is decided at once, each with its own decision and token", async ({ page }) => {
  await page.goto("/");
  const group = page.getByRole("listitem", { name: "2 similar calls: send_email in session sess-support-12" });
  await expect(group).toBeVisible();
  await shoot(page, "inbox-call-group");
  await group.getByRole("button", { name: "Approve each once (2)" }).click();
  await expect(page.getByRole("listitem", { name: /similar calls/ })).toHaveCount(0);
  const tokens = await page.evaluate(() =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith("countersign.v1.review."))
      .map((k) => JSON.parse(localStorage.getItem(k)))
      .filter((r) => r.target?.tool_call?.request.toolCallCanonical.includes("send_email"))
      .map((r) => [r.confirm.status, r.confirm.decisions.length, r.target.tool_call.outcome.token.tokenId, r.target.tool_call.outcome.token.toolCallHash, r.target.tool_call.request.toolCallHash]),
  );
  expect(tokens).toHaveLength(2);
  for (const [status, decisions, , tokenHash, requestHash] of tokens) {
    expect([status, decisions]).toEqual(["approved", 1]);
    expect(tokenHash).toBe(requestHash);
  }
  expect(tokens[0][2]).not.toBe(tokens[1][2]);
});
