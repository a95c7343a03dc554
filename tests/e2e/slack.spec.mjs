// Deciding from Slack. Countersign's Slack messages carry Approve and Deny;
// Slack posts each click to /slack/actions, signed with the app's signing
// secret. The clicks here are made as Slack makes them and signed by the
// official Python SDK (slack-sdk, in tests/slack/click.py); the message's
// response_url is a local server that records what Countersign sends back.
// The reviewer is signed in to the desk through a real provider
// (oidc-provider) and links their Slack account there.
import { expect, test } from "@playwright/test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, freePort, newPlanReview, shoot, wcagViolations } from "./support.mjs";
import { fromDesk, signIn, startDesk, startProvider, startReceiver } from "./sign-in-support.mjs";

// Slack's documented example secret: the one in the app's Basic Information.
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const APPROVE = "countersign_approve";
const DENY = "countersign_deny";

let dir, port, provider, desk, slack, clicks;

test.beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-slack-"));
  port = await freePort();
  provider = await startProvider("oidc-provider", `http://127.0.0.1:${port}/auth/callback`);
  slack = await startReceiver();
  clicks = 0;
  const secret = join(dir, "slack-signing-secret");
  writeFileSync(secret, `${SECRET}\n`);
  desk = await startDesk(dir, port, provider, { extra: ["--slack-signing-secret-file", secret] });
});

test.afterEach(async () => {
  await desk?.stop();
  desk = undefined;
  provider.stop();
  slack.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A click on a button, as Slack sends it (signed by slack-sdk): the status, and the body and headers sent. */
function click(spec) {
  clicks += 1;
  const sent = spawnSync(".venv-slack/bin/python", ["tests/slack/click.py", JSON.stringify({
    url: `${desk.url}/slack/actions`, secret: SECRET, team: "T0TEAM", user: "U0DANA", user_name: "dana",
    response_url: slack.url, action_ts: `1764400000.${String(clicks).padStart(6, "0")}`, ...spec,
  })]);
  expect(sent.status, String(sent.stderr)).toBe(0);
  return JSON.parse(String(sent.stdout));
}

/** What Countersign sent back to the message after `n` answers. */
async function answer(n) {
  await expect.poll(() => slack.bodies.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(n);
  return slack.bodies[n - 1];
}

/** A new pending review, asked with the demo agent key: its id. */
async function ask(n = 1) {
  const created = await api(desk, desk.agent, "POST", "/reviews", newPlanReview(n));
  expect(created.status).toBe(201);
  return created.body.review.confirm.confirm_id;
}

/**
 * `account` links Slack user `user` from the code a first click got: in
 * Settings, signing in from the link's page (through the API for a person
 * without a role, whom the desk shows only why).
 */
async function link(page, account, user, review, { inDesk = true } = {}) {
  const before = slack.bodies.length;
  expect(click({ action_id: APPROVE, review, user, user_name: account }).status).toBe(200);
  const told = await answer(before + 1);
  expect(told).toMatchObject({ response_type: "ephemeral", replace_original: false });
  expect(told.text).toContain("Your Slack account is not linked to a reviewer yet, so nothing was decided.");
  const code = /\/settings\?slack=(slk_\w+)/.exec(told.text)[1];
  if (!inDesk) {
    await signIn(page, desk, account);
    expect((await fromDesk(page, "GET", `/slack/link-codes/${code}`)).body.slack).toEqual({ team_id: "T0TEAM", user_id: user, user_name: account });
    expect((await fromDesk(page, "POST", "/slack/links", { code })).status).toBe(201);
    return code;
  }
  // Not signed in yet: signing in from the link's page comes back to it.
  await signIn(page, desk, account, { from: `/settings?slack=${code}` });
  await expect(page).toHaveURL(`${desk.url}/settings?slack=${code}`);
  const card = page.getByRole("region", { name: "Slack" });
  await expect(card).toContainText(`Link the Slack account @${account} (${user} in T0TEAM) to you?`);
  await card.getByRole("button", { name: "Link", exact: true }).click();
  await expect(card.getByRole("status").filter({ hasText: "Linked" })).toContainText("Click the button in Slack again.");
  await expect(card.getByRole("list", { name: "Linked Slack accounts" })).toContainText(`@${account} (${user} in T0TEAM)`);
  return code;
}

test("a reviewer links their Slack account in the desk, then approves from Slack as themselves", async ({ page }) => {
  const id = await ask();
  await link(page, "dana", "U0DANA", id);
  expect(await wcagViolations(page)).toEqual([]);
  await shoot(page, "slack-linked");
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.status).toBe("pending");
  const session = (await fromDesk(page, "GET", "/session")).body.session;
  expect(click({ action_id: APPROVE, review: id }).status).toBe(200);
  const updated = await answer(2);
  expect(updated.replace_original).toBe(true);
  expect(updated.text).toMatch(/^Approved by Dana Reviewer as reviewer in Slack: /);
  expect(JSON.stringify(updated.blocks)).not.toContain(APPROVE);
  const stored = (await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body;
  expect(stored.review.confirm.status).toBe("approved");
  expect(stored.review.deciders.at(-1)).toMatchObject({ key_id: session.id, person: { subject: "dana", name: "Dana Reviewer" } });
  expect(stored.outcome.receipt.body.decisions[0].decided_by_person.email).toBe("dana@example.com");
  // Where it was made, in the receipt, the audit chain's record and the desk.
  expect(stored.review.deciders.at(-1).channel).toBe("slack");
  expect(stored.outcome.receipt.body.decisions[0].channel).toBe("slack");
  await page.goto(`${desk.url}/reviews/${id}`);
  await expect(page.getByRole("list", { name: "Decision history" })).toContainText("approved by reviewer (Dana Reviewer) in Slack");
  await shoot(page, "history-slack");
});

test("Deny asks for the reason typed beside it, then denies with it", async ({ page }) => {
  const id = await ask();
  await link(page, "dana", "U0DANA", id);
  expect(click({ action_id: DENY, review: id }).status).toBe(200);
  expect((await answer(2))).toMatchObject({ response_type: "ephemeral", text: expect.stringContaining("Write why in the Reason box") });
  expect(click({ action_id: DENY, review: id, reason: "Not during the freeze" }).status).toBe(200);
  expect((await answer(3)).text).toMatch(/^Denied by Dana Reviewer as reviewer in Slack: /);
  const decisions = (await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.decisions;
  expect(decisions).toHaveLength(1);
  expect(decisions[0]).toMatchObject({ status: "rejected", reason: "Not during the freeze" });
});

test("a request Slack did not sign, one changed by a byte, or one signed 301 s ago decides nothing", async ({ page }) => {
  const id = await ask();
  await link(page, "dana", "U0DANA", id);
  for (const [spec, said] of [
    [{ tamper: "signature" }, "does not match"],
    [{ tamper: "body" }, "does not match"],
    [{ timestamp: Math.floor(Date.now() / 1000) - 301 }, "more than the 300 s allowed"],
  ]) {
    const refused = click({ action_id: APPROVE, review: id, ...spec });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain(said);
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(slack.bodies).toHaveLength(1);
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.status).toBe("pending");
});

test("a click sent again decides once; a click after the decision shows the one that stands", async ({ page }) => {
  const id = await ask();
  await link(page, "dana", "U0DANA", id);
  const first = click({ action_id: APPROVE, review: id });
  // The very same signed request again (a replay within Slack's five minutes).
  const again = click({ action_id: APPROVE, review: id, body: first.body, timestamp: first.timestamp, action_ts: "1764400000.000002" });
  expect([first.status, again.status]).toEqual([200, 200]);
  await answer(3);
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.decisions).toHaveLength(1);
  // Another click later (someone else's message, or an old one): what stands, replaced in.
  expect(click({ action_id: DENY, review: id, reason: "Too late" }).status).toBe(200);
  const late = await answer(4);
  expect(late.replace_original).toBe(true);
  expect(late.text).toMatch(/^Approved by Dana Reviewer as reviewer in Slack: /);
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.decisions).toHaveLength(1);
});

test("a linked person whose groups give no role is told so, and a link code works once", async ({ page }) => {
  const id = await ask();
  const code = await link(page, "nobody", "U0NOBODY", id, { inDesk: false });
  const reused = await fromDesk(page, "POST", "/slack/links", { code });
  expect(reused.status).toBe(404);
  expect(reused.body.error.message).toContain("unknown or was used already");
  expect(click({ action_id: APPROVE, review: id, user: "U0NOBODY", user_name: "nobody" }).status).toBe(200);
  const told = await answer(2);
  expect(told.response_type).toBe("ephemeral");
  expect(told.text).toContain("none of your groups gives a role");
  expect((await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body.review.confirm.status).toBe("pending");
});
