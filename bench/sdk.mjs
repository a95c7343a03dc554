// What the TypeScript SDK adds to a gated call, against raw HTTP (fetch) doing
// the same. Usage: node bench/sdk.mjs URL AGENT_KEY REVIEWER_KEY PUBLIC_KEY RUNS
// (after `npm ci` in sdk/typescript, which builds it). The same two cases as
// bench/sdk.py, interleaved run by run; prints one line per case.
import { Countersign, requireApproval } from "../sdk/typescript/dist/index.js";

const [url, agentKey, reviewerKey, publicKey, runsText] = process.argv.slice(2);
const runs = Number(runsText);
const api = `${url}/api/v1`;

async function call(key, method, path, body, headers = {}) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function decide(reviewId, decision = {}) {
  const answer = await call(reviewerKey, "POST", `/reviews/${reviewId}/decisions`, { status: "approved", decided_by_role: "reviewer", ...decision }, { "Idempotency-Key": crypto.randomUUID() });
  if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
}

const ran = ({ amount }) => amount;

async function rawCall(session, amount, reviewer) {
  const asked = await call(agentKey, "POST", "/tool-calls", {
    requestedByRole: "bench-raw", sessionId: session, runId: "r",
    toolCall: { name: "transfer", args: { amount } }, humanSummary: "transfer", riskTier: "R2",
  });
  const reviewId = asked.body.outcome.confirm_id;
  if (reviewer) await decide(reviewId);
  const outcome = (await call(agentKey, "GET", `/reviews/${reviewId}/outcome?wait=0`)).body;
  const approved = JSON.parse(outcome.approved_call);
  const redeemed = await call(agentKey, "POST", `/reviews/${reviewId}/redeem`, { tokenId: outcome.token.tokenId, toolCall: approved });
  if (redeemed.status !== 200) throw new Error(JSON.stringify(redeemed.body));
  ran(approved.args);
}

async function sdkCall(cs, amount) {
  const request = await cs.ask("transfer", { amount }, { risk: "R2", summary: "transfer" });
  await decide(request.reviewId);
  const approval = await request.wait();
  await approval.redeem();
  ran(approval.args);
}

async function grant(session, agent) {
  const asked = await call(agentKey, "POST", "/tool-calls", {
    requestedByRole: agent, sessionId: session, runId: "r",
    toolCall: { name: "transfer", args: { amount: 1 } }, humanSummary: "transfer", riskTier: "R2",
  });
  await decide(asked.body.outcome.confirm_id, { tool_call: { mode: "scope", scope: "session" } });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const cs = new Countersign({ url, agentKey, publicKey, agent: "bench-sdk" });
const session = `bench-${crypto.randomUUID()}`;
const rawSession = `bench-${crypto.randomUUID()}`;
await grant(session, "bench-sdk");
await grant(rawSession, "bench-raw");
const gated = requireApproval(new Countersign({ url, agentKey, publicKey, agent: "bench-sdk", session }), { tool: "transfer", summary: "transfer" }, ran);

for (let n = 0; n < 3; n++) {
  await rawCall(rawSession, 1, false);
  await gated({ amount: 1 });
  await rawCall(`warm-${n}`, n, true);
  await sdkCall(cs, n);
}

const cases = { "asked and decided": [[], []], "wrapper, approved by a session grant": [[], []] };
for (let n = 0; n < runs; n++) {
  for (const [name, [raw, sdk]] of Object.entries(cases)) {
    let started = performance.now();
    if (name === "asked and decided") await rawCall(`raw-${n}`, n, true);
    else await rawCall(rawSession, 1, false);
    raw.push(performance.now() - started);
    started = performance.now();
    if (name === "asked and decided") await sdkCall(cs, n);
    else await gated({ amount: 1 });
    sdk.push(performance.now() - started);
  }
}
for (const [name, [raw, sdk]] of Object.entries(cases)) {
  const [r, s] = [median(raw), median(sdk)];
  console.log(`node, ${name}: raw HTTP ${r.toFixed(2)} ms, SDK ${s.toFixed(2)} ms, SDK adds ${(s - r).toFixed(2)} ms (median of ${runs})`);
}
