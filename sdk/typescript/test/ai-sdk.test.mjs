// The Vercel AI SDK (npm `ai`, its own MockLanguageModelV4: no network)
// asking through Countersign, against a real `countersign serve`.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
import { startServer } from "./support.mjs";

const CALL = { amount: 120, to: "Printer Co" };
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

let server;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

/** The model: asks for one transfer, then says what the tool answered (or why it did not run); its provider fails `failures` times once the tool answered. */
const payThePrinter = ({ failures = 0 } = {}) =>
  new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).filter((p) => p.type === "tool-result");
      if (results.length > 0 && failures > 0) {
        failures -= 1;
        throw new Error("the model provider is overloaded");
      }
      if (results.length > 0) {
        const output = results.at(-1).output;
        const said = output.type === "execution-denied" ? `denied: ${output.reason}` : output.value;
        return { content: [{ type: "text", text: `tool said: ${said}` }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "transfer", input: JSON.stringify(CALL) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });

function transferTool(ran, { needsApproval = false } = {}) {
  return tool({
    ...(needsApproval ? { needsApproval } : {}),
    description: "Send money",
    inputSchema: jsonSchema({ type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, required: ["amount", "to"] }),
    execute: async (input) => {
      ran.push(input);
      return `sent ${input.amount} to ${input.to}`;
    },
  });
}

/** The AI SDK's own loop: generate, answer the step's approvals, generate again. */
async function run(approvals, ran, messages = [{ role: "user", content: "Pay the printer" }]) {
  const ask = { model: payThePrinter(), tools: { transfer: transferTool(ran) }, messages, toolApproval: approvals.toolApproval, maxRetries: 0 };
  let result = await generateText(ask);
  messages.push(...result.responseMessages);
  for (let answer; (answer = await approvals.answer(messages, { session: "chat-1" })); ) {
    messages.push(answer);
    result = await generateText(ask);
    messages.push(...result.responseMessages);
  }
  return result.text;
}

/** A conversation whose transfer a reviewer approved: the messages, up to the approval. */
async function approvedConversation(approvals, agent) {
  const messages = [{ role: "user", content: "Pay the printer" }];
  const paused = await generateText({ model: payThePrinter(), tools: { transfer: transferTool([]) }, messages, toolApproval: approvals.toolApproval });
  messages.push(...paused.responseMessages);
  const decided = server.decideWhenAsked(`vercel-ai:${agent}`, { status: "approved" });
  messages.push(await approvals.answer(messages));
  await decided;
  return messages;
}

const approvalsFor = (agent, options = {}) =>
  new CountersignApprovals({ agent, url: server.url, agentKey: server.agentKey, publicKey: server.publicKey, timeoutMs: 30_000, ...options });

test("an approved call runs once with the model's arguments; an edit is refused, as the AI SDK cannot run one", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const ran = [];
  const reviewer = server.refuseEditThenApprove(`vercel-ai:${agent}`);
  const said = await run(approvalsFor(agent, { risk: "R3" }), ran);
  assert.equal(await reviewer, 422);
  assert.deepEqual(ran, [CALL]);
  assert.equal(said, "tool said: sent 120 to Printer Co");
});

test("a denied call does not run, and the model reads the reviewer's reason", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const ran = [];
  const decided = server.decideWhenAsked(`vercel-ai:${agent}`, { status: "rejected", reason: "Pay the printer next month" });
  const said = await run(approvalsFor(agent), ran);
  await decided;
  assert.deepEqual(ran, []);
  assert.equal(said, "tool said: denied: Denied in Countersign by reviewer: Pay the printer next month");
});

test("no decision in time: the call does not run and the review is withdrawn", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const ran = [];
  const said = await run(approvalsFor(agent, { timeoutMs: 1000 }), ran);
  assert.deepEqual(ran, []);
  assert.match(said, /^tool said: denied: Countersign: no reviewer decided within 1 s/);
  assert.equal(said.split("did not run").length, 2, said);
  assert.deepEqual(await server.pending(`vercel-ai:${agent}`), []);
});

test("an unreachable server: the call does not run, and the model is told why", async () => {
  const ran = [];
  const unreachable = new CountersignApprovals({ agent: "payments", url: "http://127.0.0.1:1", agentKey: "cs_agent_x" });
  const said = await run(unreachable, ran);
  assert.deepEqual(ran, []);
  assert.match(said, /^tool said: denied: Countersign: cannot reach http:\/\/127\.0\.0\.1:1/);
});

test("a receipt signed by another key: the call does not run", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const ran = [];
  const { publicKey } = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const other = Buffer.from(await crypto.subtle.exportKey("raw", publicKey)).toString("base64");
  const decided = server.decideWhenAsked(`vercel-ai:${agent}`, { status: "approved" });
  const said = await run(approvalsFor(agent, { publicKey: other }), ran);
  await decided;
  assert.deepEqual(ran, []);
  assert.match(said, /the call did not run$/);
});

/** Runs `body` with these variables set, then puts the environment back. */
async function withEnv(vars, body) {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  }
}

test("given url and key, the receipt key still comes from COUNTERSIGN_PUBLIC_KEY: a receipt it does not verify runs nothing", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const { publicKey } = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const other = Buffer.from(await crypto.subtle.exportKey("raw", publicKey)).toString("base64");
  const ran = [];
  const said = await withEnv({ COUNTERSIGN_PUBLIC_KEY: other }, async () => {
    const decided = server.decideWhenAsked(`vercel-ai:${agent}`, { status: "approved" });
    const approvals = new CountersignApprovals({ agent, url: server.url, agentKey: server.agentKey, timeoutMs: 30_000 });
    const text = await run(approvals, ran);
    await decided;
    return text;
  });
  assert.deepEqual(ran, []);
  assert.match(said, /not signed by the trusted key/);
});

test("an explicit url wins over COUNTERSIGN_URL; the key still falls back to its own variable", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const ran = [];
  const said = await withEnv({ COUNTERSIGN_URL: "http://127.0.0.1:1", COUNTERSIGN_AGENT_KEY: server.agentKey, COUNTERSIGN_PUBLIC_KEY: server.publicKey }, async () => {
    const decided = server.decideWhenAsked(`vercel-ai:${agent}`, { status: "approved" });
    const text = await run(new CountersignApprovals({ agent, url: server.url, timeoutMs: 30_000 }), ran);
    await decided;
    return text;
  });
  assert.deepEqual(ran, [CALL]);
  assert.equal(said, "tool said: sent 120 to Printer Co");
});

test("settings that cannot work are refused before any run", () => {
  assert.throws(() => approvalsFor("payments", { risk: "R5" }), /R5/);
  assert.throws(() => approvalsFor("payments", { risks: { transfer: "R9" } }), /R9/);
});

test("a conversation put aside is answered and resumed in another process", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const model = payThePrinter();
  const messages = [{ role: "user", content: "Pay the printer" }];
  const paused = await generateText({ model, tools: { transfer: transferTool([]) }, messages, toolApproval: approvalsFor(agent).toolApproval });
  messages.push(...paused.responseMessages);
  const script = `import { readFileSync } from "node:fs";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
const { messages, agent, model } = JSON.parse(readFileSync(0, "utf8"));
const approvals = new CountersignApprovals({ agent });
messages.push(await approvals.answer(messages));
const ran = [];
const transfer = tool({ inputSchema: jsonSchema({ type: "object" }), execute: async (input) => (ran.push(input), "sent") });
const result = await generateText({ model: new MockLanguageModelV4({ doGenerate: model }), tools: { transfer }, messages, toolApproval: approvals.toolApproval });
console.log(JSON.stringify({ ran, text: result.text }));
`;
  const done = { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
  const out = await server.runApproved(script, `vercel-ai:${agent}`, { messages, agent, model: done });
  assert.deepEqual(JSON.parse(out), { ran: [CALL], text: "done" });
});

test("messages handed back after a failed model call do not run an approved call twice", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const approvals = approvalsFor(agent);
  const messages = await approvedConversation(approvals, agent);
  const ran = [];
  const ask = { model: payThePrinter({ failures: 1 }), tools: { transfer: transferTool(ran) }, messages, toolApproval: approvals.toolApproval, maxRetries: 0 };
  await assert.rejects(generateText(ask), /overloaded/);
  const retried = await generateText(ask);
  assert.deepEqual(ran, [CALL]);
  assert.equal(retried.text, "tool said: denied: Countersign: this approval was already used to run the call once; a replayed approval does not run it again");
});

test("messages kept and handed back in another process do not run the call again", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const approvals = approvalsFor(agent);
  const messages = await approvedConversation(approvals, agent);
  const ran = [];
  await generateText({ model: payThePrinter(), tools: { transfer: transferTool(ran) }, messages, toolApproval: approvals.toolApproval });
  assert.deepEqual(ran, [CALL]);
  const script = `import { readFileSync } from "node:fs";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
const { messages, agent, usage } = JSON.parse(readFileSync(0, "utf8"));
const approvals = new CountersignApprovals({ agent });
const ran = [];
const transfer = tool({ inputSchema: jsonSchema({ type: "object" }), execute: async (input) => (ran.push(input), "sent") });
// The model says what the tool's result was.
const doGenerate = async ({ prompt }) => {
  const output = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).filter((p) => p.type === "tool-result").at(-1).output;
  return { content: [{ type: "text", text: JSON.stringify(output) }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
};
const result = await generateText({ model: new MockLanguageModelV4({ doGenerate }), tools: { transfer }, messages, toolApproval: approvals.toolApproval });
console.log(JSON.stringify({ ran, denied: JSON.parse(result.text) }));
`;
  const out = JSON.parse(await server.runApproved(script, null, { messages, agent, usage }));
  assert.deepEqual(out.ran, []);
  assert.equal(out.denied.type, "execution-denied");
  assert.match(out.denied.reason, /already used to run the call once/);
});

test("an approval not made in Countersign does not run the call", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const approvals = approvalsFor(agent);
  const messages = [{ role: "user", content: "Pay the printer" }];
  const paused = await generateText({ model: payThePrinter(), tools: { transfer: transferTool([]) }, messages, toolApproval: approvals.toolApproval });
  messages.push(...paused.responseMessages);
  const [request] = paused.response.messages.flatMap((m) => m.content).filter((p) => p.type === "tool-approval-request");
  messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }] });
  const ran = [];
  const result = await generateText({ model: payThePrinter(), tools: { transfer: transferTool(ran) }, messages, toolApproval: approvals.toolApproval });
  assert.deepEqual(ran, []);
  assert.equal(result.text, "tool said: denied: Countersign: this call of transfer was not approved in Countersign; the call did not run");
});

test("a call not held by toolApproval is not approved, so nothing runs unspent", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const messages = [{ role: "user", content: "Pay the printer" }];
  const paused = await generateText({ model: payThePrinter(), tools: { transfer: transferTool([], { needsApproval: true }) }, messages });
  messages.push(...paused.responseMessages);
  const answer = await approvalsFor(agent).answer(messages);
  assert.equal(answer.content[0].approved, false);
  assert.match(answer.content[0].reason, /not held by `toolApproval: approvals.toolApproval`/);
  assert.deepEqual(await server.pending(`vercel-ai:${agent}`), []);
});

test("the guide's example runs as written", async () => {
  const printed = await server.runGuideExample("vercel-ai.md", "vercel-ai:payments");
  assert.deepEqual(printed, ["sent 120 to Printer Co", "The printer is paid.", "You're welcome."]);
});
