// The SDK against a real `countersign serve`: what runs is exactly what was
// approved, and every failure leaves the function not run.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";
import {
  callHash,
  Countersign,
  Denied,
  NotApproved,
  ReceiptInvalid,
  Refused,
  requireApproval,
  TimedOut,
  Unreachable,
} from "../dist/index.js";
import { agentName, startServer } from "./support.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

const client = (agent, publicKey = server.publicKey) => new Countersign({ url: server.url, agentKey: server.agentKey, publicKey, agent });

test("an approved call runs once with its arguments", async () => {
  const agent = agentName();
  const ran = [];
  const refund = requireApproval(client(agent), { tool: "refund", risk: "R3", summary: ({ customerId, amount }) => `Refund ${amount} to ${customerId}` }, async ({ customerId, amount }) => {
    ran.push({ customerId, amount });
    return "refunded";
  });
  const [result] = await Promise.all([refund({ customerId: "cus_42", amount: 120.5 }), server.decideWhenAsked(agent, { status: "approved" })]);
  assert.equal(result, "refunded");
  assert.deepEqual(ran, [{ customerId: "cus_42", amount: 120.5 }]);
});

test("an edited call runs once with exactly the edited arguments", async () => {
  const agent = agentName();
  const ran = [];
  const transfer = requireApproval(client(agent), { tool: "transfer" }, ({ to, amount }) => ran.push({ to, amount }));
  const edit = { mode: "edit", args: JSON.stringify({ to: "ACME GmbH", amount: 50 }) };
  await Promise.all([transfer({ to: "ACME GmbH", amount: 5000 }), server.decideWhenAsked(agent, { status: "approved", tool_call: edit })]);
  assert.deepEqual(ran, [{ to: "ACME GmbH", amount: 50 }]);
});

test("a denial does not run and carries the reason", async () => {
  const agent = agentName();
  const ran = [];
  const dropTable = requireApproval(client(agent), { tool: "drop_table", risk: "R4" }, ({ name }) => ran.push(name));
  const [outcome] = await Promise.allSettled([dropTable({ name: "orders" }), server.decideWhenAsked(agent, { status: "rejected", reason: "Not in production." })]);
  assert.equal(outcome.status, "rejected");
  assert.ok(outcome.reason instanceof Denied && outcome.reason instanceof NotApproved);
  assert.equal(outcome.reason.reason, "Not in production.");
  assert.deepEqual(ran, []);
});

for (const [decision, kind, reason] of [
  [{ status: "cancelled" }, "cancelled", undefined],
  [{ status: "rejected", reason: "Ask finance.", tool_call: { mode: "feedback" } }, "feedback", "Ask finance."],
]) {
  test(`a ${kind} is a denial told apart by its kind`, async () => {
    const agent = agentName();
    const ran = [];
    const archive = requireApproval(client(agent), { tool: "archive" }, ({ name }) => ran.push(name));
    const [outcome] = await Promise.allSettled([archive({ name: "q3" }), server.decideWhenAsked(agent, decision)]);
    assert.ok(outcome.reason instanceof Denied, String(outcome.reason));
    assert.deepEqual([outcome.reason.kind, outcome.reason.reason], [kind, reason]);
    assert.deepEqual(ran, []);
  });
}

test("no decision in time does not run and the review expires", async () => {
  const agent = agentName();
  const ran = [];
  const deploy = requireApproval(client(agent), { tool: "deploy", timeoutMs: 1000 }, ({ service }) => ran.push(service));
  const refused = await deploy({ service: "billing" }).catch((e) => e);
  assert.ok(refused instanceof TimedOut, String(refused));
  assert.deepEqual(ran, []);
  const stored = await server.review(refused.reviewId);
  assert.notEqual(stored.review.confirm.status, "pending");
  assert.ok(["expired", "withdrawn"].includes(stored.outcome.kind));
});

test("no server, or one that answers HTML, does not run", async () => {
  const ran = [];
  const nobody = new Countersign({ url: "http://127.0.0.1:9", agentKey: "key_x" });
  const send = requireApproval(nobody, { tool: "send" }, ({ to }) => ran.push(to));
  assert.ok((await send({ to: "ana" }).catch((e) => e)) instanceof Unreachable);

  const html = createServer((_, res) => {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<html><body>502 Bad Gateway</body></html>");
  });
  await new Promise((r) => html.listen(0, "127.0.0.1", r));
  const proxied = new Countersign({ url: `http://127.0.0.1:${html.address().port}`, agentKey: "key_x" });
  const refused = await requireApproval(proxied, { tool: "send" }, ({ to }) => ran.push(to))({ to: "ana" }).catch((e) => e);
  html.close();
  assert.ok(refused instanceof Unreachable && /not Countersign's JSON/.test(refused.message), String(refused));
  assert.deepEqual(ran, []);
});

test("a receipt signed by another key does not run and the token stays unspent", async () => {
  const agent = agentName();
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const other = Buffer.from(await crypto.subtle.exportKey("raw", pair.publicKey)).toString("base64");
  const ran = [];
  const pay = requireApproval(client(agent, other), { tool: "pay" }, ({ invoice }) => ran.push(invoice));
  const [outcome] = await Promise.allSettled([pay({ invoice: "INV-7" }), server.decideWhenAsked(agent, { status: "approved" })]);
  assert.ok(outcome.reason instanceof ReceiptInvalid && /not signed by the trusted key/.test(outcome.reason.message), String(outcome.reason));
  assert.deepEqual(ran, []);
  const stored = await server.review(outcome.reason.reviewId);
  assert.equal(stored.outcome.token.usedAt, undefined);
});

test("arguments that are not JSON send nothing", async () => {
  const agent = agentName();
  const upload = requireApproval(client(agent), { tool: "upload" }, () => assert.fail("must not run"));
  for (const data of [new Date(), () => 1, Number.NaN, 10n, undefined]) {
    await assert.rejects(upload({ path: "/tmp/x", data }), (e) => e instanceof TypeError && /argument `data`/.test(e.message));
  }
  assert.throws(() => requireApproval(client(agent), { tool: "x", risk: "R9" }, () => 1), RangeError);
  const all = await server.api("GET", `/reviews?status=all&requester=${agent}`);
  assert.deepEqual(all.body.items, []);
});

test("a request the server refuses names the field", async () => {
  const act = requireApproval(new Countersign({ url: server.url, agentKey: server.agentKey, agent: "   " }), { tool: "act" }, () => assert.fail("must not run"));
  const refused = await act({}).catch((e) => e);
  assert.ok(refused instanceof Refused, String(refused));
  assert.equal(refused.status, 422);
  assert.deepEqual(refused.problems.map(([path]) => path), ["/requestedByRole"]);
});

test("a session grant lets the same call through with its own decision", async () => {
  const agent = agentName();
  const cs = client(agent);
  const ran = [];
  const restart = requireApproval(cs, { tool: "restart" }, ({ replicas }) => ran.push(replicas));
  await Promise.all([restart({ replicas: 3 }), server.decideWhenAsked(agent, { status: "approved", tool_call: { mode: "scope", scope: "session" } })]);
  const request = await cs.ask("restart", { replicas: 3 }, { risk: "R2", summary: "restart(replicas=3)" });
  const approval = await request.wait();
  assert.ok(approval.approvedByGrant);
  await restart({ replicas: 3 });
  assert.deepEqual(ran, [3, 3]);
});

test("the lower level asks, waits, redeems once and withdraws", async () => {
  const cs = client(agentName());
  const withdrawn = await cs.ask("delete_branch", { name: "old" }, { risk: "R2", summary: "Delete branch old" });
  await withdrawn.withdraw("not needed after all");
  const denied = await withdrawn.wait(5000).catch((e) => e);
  assert.ok(denied instanceof Denied && denied.kind === "withdrawn", String(denied));

  const request = await cs.ask("delete_branch", { name: "old" }, { risk: "R2", summary: "Delete branch old" });
  await server.decide(request.reviewId, { status: "approved" });
  const approval = await request.wait(5000);
  assert.deepEqual(approval.call, { name: "delete_branch", args: { name: "old" } });
  assert.equal(approval.token.toolCallHash, await callHash("delete_branch", { name: "old" }));
  await approval.redeem();
  const spent = await approval.redeem().catch((e) => e);
  assert.ok(spent instanceof Refused && spent.code === "token_used", String(spent));
});

test("a token bound to this device is redeemed with it, and by no other", async () => {
  const agent = agentName();
  const bound = new Countersign({ url: server.url, agentKey: server.agentKey, publicKey: server.publicKey, agent, device: "laptop-7" });
  const request = await bound.ask("reboot", { host: "db-1" }, { risk: "R2", summary: "Reboot db-1" });
  await server.decide(request.reviewId, { status: "approved" });
  const approval = await request.wait(5000);
  assert.equal(approval.token.issuedToClientDeviceId, "laptop-7");
  const elsewhere = new Countersign({ url: server.url, agentKey: server.agentKey, agent, device: "phone-2" });
  const stolen = await new (request.constructor)(elsewhere, request.reviewId, request.call, 5000).wait();
  const refused = await stolen.redeem().catch((e) => e);
  assert.ok(refused instanceof Refused && refused.code === "token_device_mismatch", String(refused));
  await approval.redeem();
});
