// A decision reaching its waiting agent while many others wait, and what
// each waiter costs the server. Against `countersign serve --demo`: an agent
// asks for a tool call and waits on its outcome (`GET …/outcome?wait=30`, the
// SDKs' long poll); a reviewer key approves it; the time runs from the
// decision's request leaving to the waiter's answer arriving. Measured with
// nobody else waiting, with WAITERS other agents waiting on other requests,
// and with WAITERS event streams open as well (`GET /api/v1/events`), read by
// another process as reviewers' browsers are. The server's resident memory is
// read before and after each crowd arrives.
//
// Usage: node bench/waiting.mjs SERVER_BINARY WAITERS DECISIONS.
// Prints one line per case and one per memory figure.
// (`node bench/waiting.mjs --streams URL KEY COUNT` is the stream reader: it
// prints "open" once its COUNT streams are, and reads until killed.)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

if (process.argv[2] === "--streams") {
  const [url, key, count] = process.argv.slice(3);
  await Promise.all(Array.from({ length: Number(count) }, async () => {
    const response = await fetch(`${url}/events`, { headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" } });
    const reader = response.body.getReader();
    (async () => { while (!(await reader.read()).done) { /* read and thrown away */ } })().catch(() => {});
  }));
  console.log("open");
  await new Promise(() => {});
}

const [binary, waitersText, decisionsText] = process.argv.slice(2);
const [crowd, decisions] = [Number(waitersText), Number(decisionsText)];
// (Node's fetch opens a connection per request in flight to one origin, as
// separate agents would.)

const dir = mkdtempSync(join(tmpdir(), "countersign-bench-waiting."));
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const server = spawn(binary, ["serve", "--demo", "--listen", `127.0.0.1:${port}`, "--data", dir, "--agent-rate", "none", "--reviewer-rate", "none"],
  { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, RUST_LOG: "error" } });
const keys = await new Promise((resolve, reject) => {
  const found = {};
  server.once("exit", (code) => reject(new Error(`countersign serve exited with ${code}`)));
  createInterface({ input: server.stdout }).on("line", (line) => {
    if (line.startsWith("Demo agent key")) found.agent = line.split(" ").at(-1);
    if (line.startsWith("Demo reviewer key")) found.reviewer = line.split(" ").at(-1);
    if (found.agent && found.reviewer) resolve(found);
  });
});
const url = `http://127.0.0.1:${port}/api/v1`;
const now = () => performance.timeOrigin + performance.now();
const residentKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))[1]);
let closing = false;

async function call(key, method, path, body, headers = {}) {
  const response = await fetch(`${url}${path}`, {
    method, body: body && JSON.stringify(body),
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
  });
  return { status: response.status, body: await response.json() };
}

let asked = 0;
async function ask() {
  asked += 1;
  const answer = await call(keys.agent, "POST", "/tool-calls", {
    requestedByRole: "bench-agent", sessionId: `s${asked}`, runId: "r",
    toolCall: { name: "transfer", args: { amount: asked } }, humanSummary: "transfer", riskTier: "R2",
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  });
  if (answer.status !== 201) throw new Error(JSON.stringify(answer.body));
  return answer.body.outcome.confirm_id;
}

/** An agent waiting on `id` for as long as the run lasts (asking again each 30 s). */
async function waitForever(id, ready) {
  for (let first = true; !closing; first = false) {
    const answer = fetch(`${url}/reviews/${id}/outcome?wait=30`, { headers: { authorization: `Bearer ${keys.agent}` } });
    if (first) ready();
    await answer.then((r) => r.arrayBuffer(), () => undefined);
  }
}

/** `count` event streams held open and read by another process: it, once they are open. */
async function streamsElsewhere(count) {
  const reader = spawn(process.execPath, [process.argv[1], "--streams", url, keys.reviewer, String(count)], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    reader.once("exit", (code) => reject(new Error(`the stream reader exited with ${code}`)));
    createInterface({ input: reader.stdout }).on("line", (line) => line === "open" && resolve());
  });
  // The streams' first reads settle on the server.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return reader;
}

/** Decisions, one at a time, each on a request its agent waits on: the times. */
async function measure() {
  const took = [];
  for (let n = 0; n < decisions + 3; n++) {
    const id = await ask();
    const answered = fetch(`${url}/reviews/${id}/outcome?wait=30`, { headers: { authorization: `Bearer ${keys.agent}` } })
      .then(async (r) => (await r.json(), now()));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sent = now();
    const decided = call(keys.reviewer, "POST", `/reviews/${id}/decisions`, { status: "approved", decided_by_role: "reviewer" }, { "idempotency-key": `d${id}` });
    const at = await answered;
    if ((await decided).status !== 200) throw new Error("the decision was refused");
    if (n >= 3) took.push(at - sent);
  }
  took.sort((a, b) => a - b);
  const q = (p) => took[Math.min(took.length - 1, Math.floor(p * took.length))].toFixed(2);
  return `p50 ${q(0.5)} ms, p99 ${q(0.99)} ms (${decisions} decisions)`;
}

/** Starts `count` of `one` and resolves once each has sent its request. */
async function crowdOf(count, one) {
  await Promise.all(Array.from({ length: count }, () => new Promise((ready) => one(ready))));
  // Their requests reach the server and settle there.
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

console.log(`decision to waiting agent, nobody else waiting: ${await measure()}`);
const others = [];
for (let i = 0; i < crowd; i++) others.push(await ask());
const before = residentKb();
await crowdOf(crowd, (ready) => waitForever(others.pop(), ready));
const withWaiters = residentKb();
console.log(`decision to waiting agent, ${crowd} other agents waiting: ${await measure()}`);
const streams = await streamsElsewhere(crowd);
const withStreams = residentKb();
console.log(`decision to waiting agent, ${crowd} agents waiting and ${crowd} event streams open: ${await measure()}`);
console.log(`memory per idle waiting agent: ${((withWaiters - before) / crowd).toFixed(1)} KB (resident ${(before / 1024).toFixed(1)} → ${(withWaiters / 1024).toFixed(1)} MiB)`);
console.log(`memory per idle event stream: ${((withStreams - withWaiters) / crowd).toFixed(1)} KB (resident → ${(withStreams / 1024).toFixed(1)} MiB)`);
closing = true;
streams.kill("SIGKILL");
server.kill("SIGKILL");
rmSync(dir, { recursive: true, force: true });
process.exit(0);
