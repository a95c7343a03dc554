// The OpenAI Agents SDK for JavaScript (npm `@openai/agents`, its own
// ScriptedModel: no network, no keys) asking through Countersign, against a
// real `countersign serve`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { Agent, tool } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents-core/testing";
import { CountersignRuns } from "@countersign/sdk/openai-agents";
import { startServer } from "./support.mjs";

// No traces leave the machine (the SDK would send them to OpenAI).
process.env.OPENAI_AGENTS_DISABLE_TRACING = "1";
const CALL = { amount: 120, to: "Printer Co" };

let server;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

/** An agent whose model asks for one transfer, then says what the tool answered (or why it did not run); its provider fails `failures` times once the tool answered. */
function paymentsAgent(name, ran, { failures = 0 } = {}) {
  const transfer = tool({
    name: "transfer",
    description: "Send money",
    parameters: { type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, required: ["amount", "to"], additionalProperties: false },
    strict: true,
    needsApproval: true,
    execute: async ({ amount, to }) => {
      ran.push({ amount, to });
      return `sent ${amount} to ${to}`;
    },
  });
  const says = modelResponder(({ request }) => {
    if (failures > 0) {
      failures -= 1;
      throw new Error("the model provider is overloaded");
    }
    const output = request.input.filter((item) => item.type === "function_call_result").at(-1)?.output;
    return [assistantMessage(`tool said: ${typeof output === "string" ? output : output?.text}`)];
  });
  const model = new ScriptedModel([[functionCall("transfer", CALL, { callId: "call_1" })], says, says, says]);
  return new Agent({ name, instructions: "Pay the invoice.", tools: [transfer], model });
}

const runsFor = (options = {}) =>
  new CountersignRuns({ url: server.url, agentKey: server.agentKey, publicKey: server.publicKey, timeoutMs: 30_000, ...options });
const agentName = () => `payments-${randomUUID().slice(0, 8)}`;

test("an approved call runs once with the model's arguments; an edit is refused, as the SDK cannot run one", async () => {
  const name = agentName();
  const ran = [];
  const reviewer = server.refuseEditThenApprove(`openai-agents:${name}`);
  const result = await runsFor({ risk: "R3" }).run(paymentsAgent(name, ran), "Pay the printer");
  assert.equal(await reviewer, 422);
  assert.deepEqual(ran, [CALL]);
  assert.equal(result.finalOutput, "tool said: sent 120 to Printer Co");
});

test("a rejected call does not run, and the model reads the reviewer's reason", async () => {
  const name = agentName();
  const ran = [];
  const decided = server.decideWhenAsked(`openai-agents:${name}`, { status: "rejected", reason: "Pay the printer next month" });
  const result = await runsFor().run(paymentsAgent(name, ran), "Pay the printer");
  await decided;
  assert.deepEqual(ran, []);
  assert.equal(result.finalOutput, "tool said: Denied in Countersign by reviewer: Pay the printer next month");
});

test("no decision in time: the call does not run and the review is withdrawn", async () => {
  const name = agentName();
  const ran = [];
  const result = await runsFor({ timeoutMs: 1000 }).run(paymentsAgent(name, ran), "Pay the printer");
  assert.deepEqual(ran, []);
  assert.match(result.finalOutput, /^tool said: Countersign: no reviewer decided within 1 s/);
  assert.deepEqual(await server.pending(`openai-agents:${name}`), []);
});

test("an unreachable server: the call does not run, and the model is told why", async () => {
  const ran = [];
  const runs = new CountersignRuns({ url: "http://127.0.0.1:1", agentKey: "cs_agent_x" });
  const result = await runs.run(paymentsAgent(agentName(), ran), "Pay the printer");
  assert.deepEqual(ran, []);
  assert.match(result.finalOutput, /^tool said: Countersign: cannot reach http:\/\/127\.0\.0\.1:1/);
});

test("a receipt signed by another key: the call does not run", async () => {
  const name = agentName();
  const ran = [];
  const { publicKey } = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const other = Buffer.from(await crypto.subtle.exportKey("raw", publicKey)).toString("base64");
  const decided = server.decideWhenAsked(`openai-agents:${name}`, { status: "approved" });
  const result = await runsFor({ publicKey: other }).run(paymentsAgent(name, ran), "Pay the printer");
  await decided;
  assert.deepEqual(ran, []);
  assert.match(result.finalOutput, /the call did not run$/);
});

test("settings that cannot work are refused before any run", () => {
  assert.throws(() => runsFor({ risk: "R5" }), /R5/);
  assert.throws(() => runsFor({ risks: { transfer: "R9" } }), /R9/);
});

/** A process that resumes a pending run given as JSON; the agent is rebuilt from the same code, as an app does. */
const RESUME = `
const { readFileSync } = await import("node:fs");
const { Agent, tool } = await import("@openai/agents");
const { assistantMessage, modelResponder, ScriptedModel } = await import("@openai/agents-core/testing");
const { CountersignRuns } = await import("@countersign/sdk/openai-agents");
const { name, pending } = JSON.parse(readFileSync(0, "utf8"));
const ran = [];
const transfer = tool({ name: "transfer", description: "Send money", strict: true, needsApproval: true,
  parameters: { type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, required: ["amount", "to"], additionalProperties: false },
  execute: async (args) => (ran.push(args), "sent") });
const model = new ScriptedModel([modelResponder(() => [assistantMessage("done")])]);
const agent = new Agent({ name, instructions: "Pay the invoice.", tools: [transfer], model });
const result = await new CountersignRuns().resume(agent, pending);
console.log(JSON.stringify({ ran, output: result.finalOutput }));
`;

test("a run put aside while waiting is resumed in another process", async () => {
  const { run } = await import("@openai/agents");
  const name = agentName();
  const paused = await run(paymentsAgent(name, []), "Pay the printer");
  const pending = await runsFor().ask(paused);
  assert.equal((await server.pending(`openai-agents:${name}`)).length, 1);
  const out = await server.runApproved(RESUME, `openai-agents:${name}`, { name, pending });
  assert.deepEqual(JSON.parse(out), { ran: [CALL], output: "done" });
});

test("a pending run resumed again after a failed model call does not run the call twice", async () => {
  const { run } = await import("@openai/agents");
  const name = agentName();
  const ran = [];
  const agent = paymentsAgent(name, ran, { failures: 1 });
  const pending = await runsFor().ask(await run(agent, "Pay the printer"));
  const runs = runsFor();
  const decided = server.decideWhenAsked(`openai-agents:${name}`, { status: "approved" });
  await assert.rejects(runs.resume(agent, pending), /overloaded/);
  await decided;
  const retried = await runs.resume(agent, pending);
  assert.deepEqual(ran, [CALL]);
  assert.equal(retried.finalOutput, "tool said: Countersign: this approval was already used to run the call once; a replayed approval does not run it again");
  // The same pending run, kept as JSON and resumed after a restart: still not run again.
  const again = JSON.parse(await server.runApproved(RESUME, null, { name, pending }));
  assert.deepEqual(again.ran, []);
});

test("two runs through one CountersignRuns are two sessions: a grant in one does not approve the other", async () => {
  const { run } = await import("@openai/agents");
  const name = agentName();
  const runs = runsFor();
  const first = await runs.ask(await run(paymentsAgent(name, []), "Pay the printer"));
  const [asked] = await server.pending(`openai-agents:${name}`);
  await server.decide(asked.confirm.confirm_id, { status: "approved", tool_call: { mode: "scope", scope: "session" } });
  const second = await runs.ask(await run(paymentsAgent(name, []), "Pay the printer"));
  assert.notEqual(first.session, second.session);
  // The grant covers the first run's session only: the second run's call waits for a reviewer.
  assert.equal((await server.pending(`openai-agents:${name}`)).length, 1);
});

test("the guide's example runs as written", async () => {
  const printed = await server.runGuideExample("openai-agents-js.md", "openai-agents:payments");
  assert.deepEqual(printed, ["sent 120 to Printer Co", "The printer is paid."]);
});
