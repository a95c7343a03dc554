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

/** The model: asks for one transfer, then says what the tool answered (or why it did not run). */
const payThePrinter = () =>
  new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((m) => m.role === "tool").flatMap((m) => m.content);
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

function transferTool(ran) {
  return tool({
    description: "Send money",
    inputSchema: jsonSchema({ type: "object", properties: { amount: { type: "number" }, to: { type: "string" } }, required: ["amount", "to"] }),
    needsApproval: true,
    execute: async (input) => {
      ran.push(input);
      return `sent ${input.amount} to ${input.to}`;
    },
  });
}

/** The AI SDK's own loop: generate, answer the step's approvals, generate again. */
async function run(approvals, ran) {
  const model = payThePrinter();
  const tools = { transfer: transferTool(ran) };
  const messages = [{ role: "user", content: "Pay the printer" }];
  let result = await generateText({ model, tools, messages });
  messages.push(...result.response.messages);
  for (let answer; (answer = await approvals.answer(messages)); ) {
    messages.push(answer);
    result = await generateText({ model, tools, messages });
    messages.push(...result.response.messages);
  }
  return result.text;
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

test("settings that cannot work are refused before any run", () => {
  assert.throws(() => approvalsFor("payments", { risk: "R5" }), /R5/);
  assert.throws(() => approvalsFor("payments", { risks: { transfer: "R9" } }), /R9/);
});

test("a conversation put aside is answered and resumed in another process", async () => {
  const agent = `payments-${randomUUID().slice(0, 8)}`;
  const model = payThePrinter();
  const messages = [{ role: "user", content: "Pay the printer" }];
  const paused = await generateText({ model, tools: { transfer: transferTool([]) }, messages });
  messages.push(...paused.response.messages);
  const script = `import { readFileSync } from "node:fs";
import { generateText, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
const { messages, agent, model } = JSON.parse(readFileSync(0, "utf8"));
const approvals = new CountersignApprovals({ agent });
messages.push(await approvals.answer(messages));
const ran = [];
const transfer = tool({ inputSchema: jsonSchema({ type: "object" }), needsApproval: true, execute: async (input) => (ran.push(input), "sent") });
const result = await generateText({ model: new MockLanguageModelV4({ doGenerate: model }), tools: { transfer }, messages });
console.log(JSON.stringify({ ran, text: result.text }));
`;
  const done = { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
  const out = await server.runApproved(script, `vercel-ai:${agent}`, { messages, agent, model: done });
  assert.deepEqual(JSON.parse(out), { ran: [CALL], text: "done" });
});

test("the guide's example runs as written", async () => {
  const printed = await server.runGuideExample("vercel-ai.md", "vercel-ai:payments");
  assert.deepEqual(printed, ["sent 120 to Printer Co", "The printer is paid."]);
});
