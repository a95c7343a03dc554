// Countersign's own messages in Slack (serve --slack-bot-token-file): each
// new request posted in its rule's channel, and the message kept true after
// any decision (the desk, the API, a click in Slack, an e-mail's link), an
// expiry or an escalation; and one decision whatever the channel. A
// local server stands in for Slack's Web API: it checks each call against
// Slack's documented request shape (a bot token, JSON, the arguments
// chat.postMessage and chat.update require) and answers as Slack does.
import { expect, test } from "@playwright/test";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, freePort, newPlanReview } from "./support.mjs";
import { fromDesk, signIn, startDesk, startProvider, startReceiver, startSmtp } from "./sign-in-support.mjs";

// Slack's documented example token and signing secret.
const TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy";
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const POLICY = `
[[rule]]
name = "restarts"
tool = "restart_*"
expires_after = "3s"
slack_channel = "C0OPSTEAM"

[[rule]]
name = "deploys"
tool = "deploy_*"
escalate_after = "2s"
slack_channel = "C0OPSTEAM"

[[rule]]
name = "unjoined"
tool = "rotate_*"
slack_channel = "C0NOTJOINED"
`;

let dir, provider, desk, slack, smtp;

/** Slack's Web API, as far as the bot uses it: the calls it took, and any it refused for their shape. */
async function startSlackApi() {
  const calls = [];
  const refused = [];
  let posted = 0;
  const server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => (text += chunk));
    request.on("end", () => {
      const method = request.url.replace(/^\/api\//, "");
      const problems = [];
      if (request.method !== "POST") problems.push(`${request.method}, not POST`);
      if (request.headers.authorization !== `Bearer ${TOKEN}`) problems.push("not the bot token");
      if (!/^application\/json; charset=utf-8$/i.test(request.headers["content-type"] ?? "")) problems.push("not JSON in UTF-8");
      let body = {};
      try { body = JSON.parse(text); } catch { problems.push("a body that is not JSON"); }
      if (typeof body.channel !== "string") problems.push("no channel");
      if (method === "chat.postMessage" && typeof body.text !== "string" && !Array.isArray(body.blocks)) problems.push("neither text nor blocks");
      if (method === "chat.update" && typeof body.ts !== "string") problems.push("no ts");
      if (!["chat.postMessage", "chat.update"].includes(method)) problems.push(`unknown method ${method}`);
      const answer = (json) => response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(json));
      if (problems.length > 0) {
        refused.push({ method, problems });
        return answer({ ok: false, error: "invalid_arguments" });
      }
      if (body.channel === "C0NOTJOINED") return answer({ ok: false, error: "not_in_channel" });
      const ts = method === "chat.update" ? body.ts : `1764400000.${String(++posted).padStart(6, "0")}`;
      calls.push({ method, ts, body });
      answer({ ok: true, channel: body.channel, ts, ...(method === "chat.update" ? { text: body.text } : { message: { text: body.text, ts } }) });
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/api`, calls, refused, stop: () => server.close() };
}

test.beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "countersign-slack-bot-"));
  const port = await freePort();
  provider = await startProvider("oidc-provider", `http://127.0.0.1:${port}/auth/callback`);
  slack = await startSlackApi();
  smtp = await startSmtp();
  const file = (name, text) => (writeFileSync(join(dir, name), text), join(dir, name));
  desk = await startDesk(dir, port, provider, { extra: [
    "--policy", file("policy.toml", POLICY),
    "--slack-signing-secret-file", file("slack-signing-secret", `${SECRET}\n`),
    "--slack-bot-token-file", file("slack-bot-token", `${TOKEN}\n`),
    "--slack-channel", "C0REVIEWS",
    "--slack-api-url", slack.url,
    "--smtp-url", `smtp://127.0.0.1:${smtp.port}`, "--mail-from", "countersign@example.com", "--mail-to", "dana@example.com",
  ] });
});

test.afterEach(async () => {
  await desk?.stop();
  desk = undefined;
  provider.stop();
  slack.stop();
  smtp.stop();
  expect(slack.refused, "every call had Slack's shape").toEqual([]);
  rmSync(dir, { recursive: true, force: true });
});

/** The calls of `method` about the review `id` (its link is in every message). */
function callsAbout(id, method) {
  return slack.calls.filter((c) => c.method === method && JSON.stringify(c.body).includes(id));
}

/** The one call of `method` about `id` whose text matches `pattern`, once it came. */
async function called(id, method, pattern) {
  await expect.poll(() => callsAbout(id, method).filter((c) => pattern.test(c.body.text)).length, { timeout: 20_000 }).toBe(1);
  return callsAbout(id, method).find((c) => pattern.test(c.body.text));
}

/** A tool call asked by the demo agent: its review's id. */
async function askCall(name) {
  const asked = await api(desk, desk.agent, "POST", "/tool-calls", {
    requestedByRole: "ops-agent", sessionId: "s1", runId: `r-${name}`,
    toolCall: { name, args: { service: "billing" } }, humanSummary: `${name} billing`, riskTier: "R2",
  });
  expect(asked.status).toBe(201);
  return asked.body.outcome.confirm_id;
}

test("the bot posts a request with its buttons, and a decision in the desk updates the message to say who decided", async ({ page }) => {
  const created = await api(desk, desk.agent, "POST", "/reviews", newPlanReview(1));
  expect(created.status).toBe(201);
  const id = created.body.review.confirm.confirm_id;
  const post = await called(id, "chat.postMessage", /^New request waiting for approval/);
  expect(post.body.channel).toBe("C0REVIEWS");
  expect(JSON.stringify(post.body.blocks)).toContain("countersign_approve");
  expect(post.body).toMatchObject({ link_names: false, unfurl_links: false });

  await signIn(page, desk, "dana");
  await page.goto(`${desk.url}/reviews/${id}`);
  await page.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("status").filter({ hasText: "approved by reviewer" })).toBeVisible();

  const update = await called(id, "chat.update", /^Decided: approved by Dana Reviewer as reviewer in the desk: /);
  expect(update.body).toMatchObject({ channel: "C0REVIEWS", ts: post.ts });
  expect(JSON.stringify(update.body.blocks)).not.toContain("countersign_approve");
  expect(callsAbout(id, "chat.postMessage")).toHaveLength(1);
});

test("a request goes to its rule's channel; its expiry, and another's escalation, are said in their messages", async () => {
  const restart = await askCall("restart_service");
  const deploy = await askCall("deploy_service");
  const posted = await called(restart, "chat.postMessage", /^New request/);
  expect(posted.body.channel).toBe("C0OPSTEAM");

  const expired = await called(restart, "chat.update", /^Expired with no decision: denied/);
  expect(expired.body).toMatchObject({ channel: "C0OPSTEAM", ts: posted.ts });
  expect(JSON.stringify(expired.body.blocks)).not.toContain("countersign_approve");

  const deployPost = await called(deploy, "chat.postMessage", /^New request/);
  const escalated = await called(deploy, "chat.update", /^Escalated: still waiting for a decision/);
  expect(escalated.body.ts).toBe(deployPost.ts);
  expect(JSON.stringify(escalated.body.blocks), "still decidable").toContain("countersign_approve");
  const reminder = await called(deploy, "chat.postMessage", /^Still waiting for a decision, and escalated/);
  expect(reminder.body).toMatchObject({ channel: "C0OPSTEAM", thread_ts: deployPost.ts, reply_broadcast: true });
});

test("a channel the app is not in is skipped and logged; the next request is posted", async () => {
  const rotate = await askCall("rotate_keys");
  const restart = await askCall("restart_worker");
  await called(restart, "chat.postMessage", /^New request/);
  expect(callsAbout(rotate, "chat.postMessage")).toEqual([]);
  await expect.poll(() => desk.logged, { timeout: 10_000 }).toContain("Slack refused chat.postMessage: not_in_channel; invite the app to the channel");
});

/** Slack clicks on `id`'s buttons, all at once, signed by slack-sdk: each one's status. */
function clicks(specs) {
  return new Promise((resolve, reject) => {
    const child = spawn(".venv-slack/bin/python", ["tests/slack/click.py", JSON.stringify(specs)]);
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
  });
}

test("32 decisions at once from the desk, the API, Slack and e-mail: one stands, and every channel says which", async ({ page }) => {
  const replies = await startReceiver();
  try {
    const created = await api(desk, desk.agent, "POST", "/reviews", newPlanReview(2));
    const id = created.body.review.confirm.confirm_id;
    const post = await called(id, "chat.postMessage", /^New request/);
    const click = (action_ts, choice) => ({
      url: `${desk.url}/slack/actions`, secret: SECRET, team: "T0TEAM", user: "U0DANA", user_name: "dana",
      response_url: replies.url, action_ts, review: id,
      ...(choice === "deny" ? { action_id: "countersign_deny", reason: "Not now" } : { action_id: "countersign_approve" }),
    });
    // Dana links her Slack account first.
    expect((await clicks([click("1764400001.000000", "approve")]))[0].status).toBe(200);
    await expect.poll(() => replies.bodies.length, { timeout: 15_000 }).toBe(1);
    const code = /\/settings\?slack=(slk_\w+)/.exec(replies.bodies[0].text)[1];
    await signIn(page, desk, "dana");
    expect((await fromDesk(page, "POST", "/slack/links", { code })).status).toBe(201);

    // Dana's e-mail about it, with its link.
    await expect.poll(() => smtp.mails.some((m) => m.body.includes(id)), { timeout: 20_000 }).toBe(true);
    const mailLink = /\?mail=(mlk_\w+)/.exec(smtp.mails.find((m) => m.body.includes(id)).body)[1];

    // 12 clicks in Slack, 6 decisions from Dana's desk, 4 from her e-mail's
    // link, 10 with a reviewer key; half deny.
    const choice = (i) => (i % 2 ? "deny" : "approve");
    const body = (i) => ({ status: choice(i) === "deny" ? "rejected" : "approved", decided_by_role: "reviewer", reason: "Checked" });
    const slackAnswers = clicks(Array.from({ length: 12 }, (_, i) => click(`1764400002.${String(i).padStart(6, "0")}`, choice(i))));
    const deskAnswers = Array.from({ length: 10 }, (_, i) =>
      fromDesk(page, "POST", `/reviews/${id}/decisions`, i < 4 ? { ...body(i), mail_link: mailLink } : body(i)));
    const apiAnswers = Array.from({ length: 10 }, (_, i) =>
      api(desk, desk.reviewer, "POST", `/reviews/${id}/decisions`, body(i), { "Idempotency-Key": `api-${i}` }));
    const [slacked, ...decided] = await Promise.all([slackAnswers, ...deskAnswers, ...apiAnswers]);
    expect(slacked.map((a) => a.status)).toEqual(Array(12).fill(200));

    const stored = (await api(desk, desk.reviewer, "GET", `/reviews/${id}`)).body;
    expect(stored.review.confirm.decisions, "exactly one decision").toHaveLength(1);
    const [decision] = stored.review.confirm.decisions;
    const winner = stored.review.deciders[0].channel;
    expect(stored.outcome.receipt.body.decisions).toEqual([expect.objectContaining({ decision_id: decision.decision_id, channel: winner })]);
    // The desk, e-mail and the API: the one that won got 200, every other
    // 409 naming what stands.
    const won = decided.filter((a) => a.status === 200);
    expect(won).toHaveLength(["desk", "email", "api"].includes(winner) ? 1 : 0);
    for (const lost of decided.filter((a) => a.status !== 200)) {
      expect(lost.status).toBe(409);
      expect(JSON.stringify(lost.body)).toContain(decision.decision_id);
    }
    // Slack: every click's message now says the decision that stands (and the
    // one that made it, when it was a click, says the same).
    const word = decision.status === "approved" ? "Approved" : "Denied";
    const where = { desk: "in the desk", email: "by e-mail", api: "through the API", slack: "in Slack" }[winner];
    await expect.poll(() => replies.bodies.length, { timeout: 15_000 }).toBe(13);
    for (const reply of replies.bodies.slice(1)) {
      expect(reply.replace_original).toBe(true);
      expect(reply.text).toMatch(new RegExp(`^${word} by .* as reviewer ${where}: `));
    }
    // The bot's message: updated once, to the same decision, without buttons.
    const update = await called(id, "chat.update", /^Decided: /);
    expect(update.body.ts).toBe(post.ts);
    expect(update.body.text).toContain(`Decided: ${decision.status} by `);
    expect(update.body.text).toContain(where);
    expect(JSON.stringify(update.body.blocks)).not.toContain("countersign_approve");
    // The desk.
    await page.goto(`${desk.url}/reviews/${id}`);
    await expect(page.getByRole("list", { name: "Decision history" }).getByRole("listitem")).toHaveCount(1);
    await expect(page.getByRole("list", { name: "Decision history" })).toContainText(where);
  } finally {
    replies.stop();
  }
});
