// The release build under its Content-Security-Policy, and hostile content
// shown inert and literal (docs/security.md).
import { expect, test } from "@playwright/test";
import { createHash } from "node:crypto";
import { shoot } from "./support.mjs";

/** Records every CSP violation and page error from the first script on. */
async function watch(page) {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__violations.push(`${e.violatedDirective}: ${e.blockedURI || "inline"}`),
    );
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}
const violations = (page) => page.evaluate(() => window.__violations);

/** How far the page scrolls sideways at desktop and at phone width (0 when it does not). */
async function sidewaysScroll(page) {
  const before = page.viewportSize();
  const overflow = {};
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    overflow[width] = await page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));
  }
  await page.setViewportSize(before);
  return overflow;
}

test("the app runs under a strict Content-Security-Policy that blocks injected script", async ({ page }) => {
  const errors = await watch(page);
  await page.goto("/");
  const policy = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute("content");
  const inline = await page.locator("script:not([src])").evaluateAll((scripts) => scripts.map((s) => s.textContent));
  expect(inline, "one inline script: the boot script").toHaveLength(1);
  const hash = createHash("sha256").update(inline[0]).digest("base64");
  expect(policy, "the boot script is allowed by its hash, and only it").toContain(`script-src 'self' 'sha256-${hash}' 'wasm-unsafe-eval';`);
  expect(policy).not.toContain("unsafe-inline");
  await expect(page.getByRole("heading", { level: 1, name: "Inbox" })).toBeVisible();
  await page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /Database Migration Plan/ }).click();
  await expect(page.locator(".dag svg")).toBeVisible();
  await page.goto("/settings");
  await expect(page.getByRole("heading", { level: 1, name: "Settings" })).toBeVisible();
  expect(await violations(page), "the app itself triggers no violation").toEqual([]);
  expect(errors).toEqual([]);

  // What an injection would try: an inline script and an inline handler.
  await page.evaluate(() => {
    const script = document.createElement("script");
    script.textContent = "window.__ran = 'script'";
    document.body.append(script);
    const img = document.createElement("img");
    img.setAttribute("src", "data:,x");
    img.setAttribute("onerror", "window.__ran = 'handler'");
    document.body.append(img);
  });
  await expect.poll(() => violations(page).then((v) => v.length)).toBeGreaterThanOrEqual(2);
  expect(await page.evaluate(() => window.__ran)).toBeUndefined();
});

test("hostile text in a plan and its confirm is shown literally and runs nothing", async ({ page }) => {
  const errors = await watch(page);
  const id = (n) => `bbbbbbbb-0000-4000-8000-${String(n).padStart(12, "0")}`;
  const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
  const payloads = {
    title: `<img src=x onerror="window.__ran='title'">Hostile plan`,
    reason: `<script>window.__ran='reason'</script> and a javascript:alert(1) link`,
    role: `agent\u202Eevil\u200B`,
    step: `<svg onload="window.__ran='step'"><a href="javascript:window.__ran='link'">click</a></svg>`,
    objective: `"'><iframe src="javascript:window.__ran='frame'"></iframe>${"long ".repeat(2000)}`,
  };
  const confirm = {
    meta, confirm_id: id(1), target_type: "plan", target_id: id(2), status: "pending",
    requested_by_role: payloads.role, requested_at: "2026-11-20T10:00:00Z", reason: payloads.reason,
  };
  const plan = {
    meta, plan_id: id(2), context_id: id(3), title: payloads.title, objective: payloads.objective, status: "proposed",
    steps: [
      { step_id: id(10), description: payloads.step, status: "pending", agent_role: payloads.role, dependencies: [] },
      { step_id: id(11), description: "Second step", status: "pending", dependencies: [id(10)] },
    ],
  };
  await page.goto("/import");
  await page.getByLabel("Or paste JSON").fill(JSON.stringify([confirm, plan]));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();

  await page.goto("/");
  const row = page.getByRole("list", { name: "Reviews" }).getByRole("listitem").filter({ hasText: "Hostile plan" });
  await expect(row).toContainText(payloads.title);
  expect(await sidewaysScroll(page), "the inbox does not scroll sideways").toEqual({ 1280: 0, 375: 0 });
  await row.getByRole("link").click();
  await expect(page.getByRole("heading", { level: 1 })).toContainText(payloads.title);
  await expect(page.getByText(payloads.reason, { exact: false }).first()).toBeVisible();
  await expect(page.locator(".dag svg")).toContainText(`onload="window.__ran='step'">`);
  // The bidi override and the zero-width space in the role are shown, not obeyed.
  await expect(page.getByText("agent[U+202E]evil[U+200B]").first()).toBeVisible();
  await expect(page.locator(".dag svg")).toContainText("agent[U+202E]ev…");
  // In its description too, then in its details.
  const step = page.locator('.dag g[data-step="0"]');
  await expect(step).toHaveAccessibleDescription(`Step 1: ${payloads.step}. Status pending. Role agent[U+202E]evil[U+200B].`);
  await step.click();
  await expect(page.getByRole("region", { name: "Step details" })).toContainText(payloads.step);
  // The 10,000-character objective scrolls in its own box; nothing widens the page.
  const objective = page.getByRole("region", { name: "Plan objective" });
  expect(await objective.evaluate((b) => b.scrollHeight > b.clientHeight && b.clientHeight < 500)).toBe(true);
  expect(await sidewaysScroll(page), "the review page does not scroll sideways").toEqual({ 1280: 0, 375: 0 });
  await shoot(page, "hostile-content");
  expect(await page.evaluate(() => window.__ran), "no payload ran").toBeUndefined();
  expect(await page.locator("main img, main iframe, main script, main a[href^='javascript:'], [onerror], [onload]").count(), "no payload became an element").toBe(0);
  expect(await violations(page), "nothing was even attempted").toEqual([]);
  expect(errors).toEqual([]);
});

test("a tool call's hidden characters are shown as escapes in the exact call", async ({ page }) => {
  const errors = await watch(page);
  const request = {
    requestedByRole: "payments-agent", sessionId: "sess\u200b-1", runId: "run-1",
    toolCall: { name: "hostile_wire", args: { to: "ACME\u202e HbmG", memo: "<script>window.__ran='args'</script>", iban: "DE89\u200d3704" } },
    humanSummary: "Wire 10 EUR to ACME", riskTier: "R3",
  };
  await page.goto("/import");
  await page.getByLabel("Or paste JSON").fill(JSON.stringify(request));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();
  await page.goto("/?type=other");
  await page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /hostile_wire/ }).first().click();
  const exact = page.getByLabel("Exact call (canonical JSON)");
  await expect(exact).toContainText('"to": "ACME\\u202e HbmG"');
  await expect(exact).toContainText('"iban": "DE89\\u200d3704"');
  await expect(exact).toContainText(`"memo": "<script>window.__ran='args'</script>"`);
  await expect(page.getByText("sess[U+200B]-1")).toBeVisible();
  await expect(page.getByText("DE89[U+200D]3704")).toBeVisible(); // in what the summary leaves out
  await shoot(page, "hostile-tool-call");
  expect(await page.evaluate(() => window.__ran)).toBeUndefined();
  expect(await violations(page)).toEqual([]);
  expect(errors).toEqual([]);
});

test("a 1 MB reason stays legible, deep arguments are shown, and JSON nested too deep is refused with its place", async ({ page }) => {
  const errors = await watch(page);
  const id = (n) => `cccccccc-0000-4000-8000-${String(n).padStart(12, "0")}`;
  const meta = { protocol_version: "1.0.0", schema_version: "1.0.0" };
  const reason = `Megabyte reason starts. ${"<b>Rotate</b>\u202E every key ".repeat(40_000)}Megabyte reason ends.`;
  expect(reason.length).toBeGreaterThan(1_000_000);
  const confirm = {
    meta, confirm_id: id(1), target_type: "plan", target_id: id(2), status: "pending",
    requested_by_role: "verbose-agent", requested_at: "2026-11-20T10:00:00Z", reason,
  };
  const plan = {
    meta, plan_id: id(2), context_id: id(3), title: "Plan with a megabyte reason", objective: "Stay legible", status: "proposed",
    steps: [{ step_id: id(10), description: "Only step", status: "pending", dependencies: [] }],
  };
  await page.goto("/import");
  await page.getByLabel("Or paste JSON").fill(JSON.stringify([confirm, plan]));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();

  // Arguments 100 levels deep: imported, and the innermost value is in the exact call.
  let args = { leaf: "deepest <i>value</i>" };
  for (let level = 0; level < 100; level++) args = { [`level${level}`]: args };
  const request = { requestedByRole: "deep-agent", sessionId: "s-1", runId: "r-1", toolCall: { name: "deep_call", args }, humanSummary: "Run the deep call", riskTier: "R1" };
  await page.goto("/import");
  await page.getByLabel("Or paste JSON").fill(JSON.stringify(request));
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText("Imported 1 review.")).toBeVisible();

  // Past the parser's depth: a clear refusal naming where, nothing stored, no panic.
  // (The inbox index and its head are left out: they follow the previous import a moment later.)
  const stored = () => page.evaluate(() => JSON.stringify(Object.entries(localStorage).filter(([k]) => !k.startsWith("countersign.v1.inbox-"))).length);
  const before = await stored();
  await page.goto("/import");
  await page.getByLabel("Or paste JSON").fill(`{"toolCall": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`);
  await page.getByRole("button", { name: "Check and import" }).click();
  await expect(page.getByText(/Nothing imported: not JSON.*recursion limit.*column/).first()).toBeVisible();
  expect(await stored(), "the refused import changed nothing stored").toBe(before);

  await page.goto("/?type=other");
  await page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /deep_call/ }).first().click();
  await expect(page.getByLabel("Exact call (canonical JSON)")).toContainText('"leaf": "deepest <i>value</i>"');
  await page.screenshot({ path: "tests/e2e/output/screenshots/deep-arguments-desktop.png" });

  await page.goto("/");
  await page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /megabyte reason/i }).first().click();
  // Checked in the page, so a failure does not print a megabyte.
  const shown = await page.locator(".request-reason").evaluate((p) => ({
    starts: p.textContent.startsWith("Megabyte reason starts. <b>Rotate</b>[U+202E] every key"),
    ends: p.textContent.endsWith("every key Megabyte reason ends."),
    length: p.textContent.length,
  }));
  expect(shown, "the whole reason, literal, its overrides visible").toEqual({ starts: true, ends: true, length: reason.length + 40_000 * 7 });
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, `no sideways scrolling at ${width} px`).toBeLessThanOrEqual(0);
    // The reason scrolls in its own box, so the decision form stays near.
    const box = page.getByRole("region", { name: "Reason for the request" });
    expect(await box.evaluate((b) => b.scrollHeight > b.clientHeight && b.clientHeight < 500)).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollHeight), "the page stays short").toBeLessThan(6000);
    await page.screenshot({ path: `tests/e2e/output/screenshots/megabyte-reason-${width === 375 ? "phone" : "desktop"}.png` });
  }
  expect(await page.evaluate(() => window.__ran)).toBeUndefined();
  expect(await violations(page)).toEqual([]);
  expect(errors).toEqual([]);
});
