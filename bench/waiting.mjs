// A decision reaching its waiting agent while many others wait, and what
// each waiter costs the server. Against `countersign serve --demo`: an agent
// asks for a tool call and waits on its outcome (`GET …/outcome?wait=30`, the
// SDKs' long poll); a reviewer key approves it; the time runs from the
// decision's request leaving to the waiter's answer arriving. Measured with
// nobody else waiting, with WAITERS other agents waiting on other requests,
// and with WAITERS event streams open as well (`GET /api/v1/events`); each
// crowd in another process, as agents and reviewers' browsers are. The
// server's resident memory is read before and after each crowd arrives.
//
// Usage: node bench/waiting.mjs SERVER_BINARY WAITERS DECISIONS.
// Prints one line per case and one per memory figure.
// (`node bench/waiting.mjs --crowd waiters|streams URL KEY ID...` is a crowd:
// it prints "open" once each has sent its request, and goes on until killed.)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

if (process.argv[2] === "--crowd") {
  const [kind, url, key, ...ids] = process.argv.slice(3);
  const headers = { authorization: `Bearer ${key}` };
  /** An agent waiting on `id` until killed (asking again each 30 s). */
  async function waiter(id, ready) {
    for (let first = true; ; first = false) {
      const answer = fetch(`${url}/reviews/${id}/outcome?wait=30`, { headers });
      if (first) ready();
      await answer.then((r) => r.arrayBuffer(), () => undefined);
    }
  }
  /** An event stream read and thrown away until killed. */
  async function stream(ready) {
    const response = await fetch(`${url}/events`, { headers: { ...headers, accept: "text/event-stream" } });
    ready();
    const reader = response.body.getReader();
    while (!(await reader.read()).done) { /* read and thrown away */ }
  }
  await Promise.all(ids.map((id) => new Promise((ready) => (kind === "waiters" ? waiter(id, ready) : stream(ready)).catch(() => {}))));
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

/**
 * A crowd in another process, as agents and reviewers' browsers are:
 * `waiters` long-polling the reviews `ids`, or `streams` (one per id), each
 * sent once it resolves.
 */
async function crowdElsewhere(kind, key, ids) {
  // At the lowest priority: on this machine's 2 cores the crowd stands for
  // clients on other machines, and must not take the CPU the server needs.
  const crowd = spawn("nice", ["-n", "19", process.execPath, process.argv[1], "--crowd", kind, url, key, ...ids], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    crowd.once("exit", (code) => reject(new Error(`the ${kind} exited with ${code}`)));
    createInterface({ input: crowd.stdout }).on("line", (line) => line === "open" && resolve());
  });
  // Their requests reach the server and settle there.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return crowd;
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

console.log(`decision to waiting agent, nobody else waiting: ${await measure()}`);
const others = [];
for (let i = 0; i < crowd; i++) others.push(await ask());
const before = residentKb();
const waiters = await crowdElsewhere("waiters", keys.agent, others);
const withWaiters = residentKb();
console.log(`decision to waiting agent, ${crowd} other agents waiting: ${await measure()}`);
// Read again here: the decisions measured since the waiters came grew it too.
const beforeStreams = residentKb();
const streams = await crowdElsewhere("streams", keys.reviewer, others);
const withStreams = residentKb();
console.log(`decision to waiting agent, ${crowd} agents waiting and ${crowd} event streams open: ${await measure()}`);
console.log(`memory per idle waiting agent: ${((withWaiters - before) / crowd).toFixed(1)} KB (resident ${(before / 1024).toFixed(1)} → ${(withWaiters / 1024).toFixed(1)} MiB)`);
console.log(`memory per idle event stream: ${((withStreams - beforeStreams) / crowd).toFixed(1)} KB (resident ${(beforeStreams / 1024).toFixed(1)} → ${(withStreams / 1024).toFixed(1)} MiB)`);
waiters.kill("SIGKILL");
streams.kill("SIGKILL");
server.kill("SIGKILL");
rmSync(dir, { recursive: true, force: true });
process.exit(0);
