// Countersign as the reviewer's inbox of a real LangGraph server (`langgraph
// dev` from PyPI, in memory, serving the graphs in tests/langgraph/: a
// hand-written graph interrupting in every shape, and two LangChain agents
// built with `create_agent` and `HumanInTheLoopMiddleware`, batched and
// per_call). Every pending interrupt is listed, each decision resumes its
// thread with the thread's own assistant, and the state read back from the
// server holds exactly the answer given: what the tools ran with, and what the
// model was told. A refused answer or a stopped server fails visibly and
// nothing is recorded.
import { rmSync } from "node:fs";
import { expect, test } from "@playwright/test";
import { failOnScriptErrors, interruptedThread, langgraphCall as call, shoot, startLangGraph } from "./support.mjs";


failOnScriptErrors();
test.describe.configure({ mode: "serial", timeout: 120_000 });

/** What the scripted model of a LangChain agent was told by its tools, once
 * the resumed thread has finished: [{tool, status, content}]. */
async function modelSaw(server, thread) {
  let last;
  await expect
    .poll(
      async () => {
        const state = await call(server, "GET", `/threads/${thread}/state`);
        last = state.values.messages?.at(-1);
        return state.next.length === 0 && last?.type === "ai" && !last.tool_calls?.length;
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return JSON.parse(last.content);
}

/** The tool messages the model saw, by tool (their order is the middleware's). */
function byTool(messages) {
  return Object.fromEntries(messages.map((m) => [m.tool, m]));
}

/** The assistant every run of a thread was started with. */
async function runAssistants(server, thread) {
  const runs = await call(server, "GET", `/threads/${thread}/runs`);
  return [...new Set(runs.map((r) => r.assistant_id))];
}

/** The answers the graph recorded once its resumed run finished `node`. */
async function answerOf(server, thread, node) {
  let values;
  await expect
    .poll(
      async () => {
        values = (await call(server, "GET", `/threads/${thread}/state`)).values;
        return node in (values.answers ?? {});
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return values.answers[node];
}

async function connect(page, server) {
  await page.goto("/settings");
  await page.getByLabel("Kind of server").selectOption("langgraph");
  await page.getByLabel("Server address").fill(server.url);
  await page.getByRole("button", { name: "Connect" }).click();
  await expect(page.locator(".link-state")).toHaveText("Refreshing every 3 s", { timeout: 15_000 });
}

/** Opens the review of the interrupt named `tool` in `thread`. */
async function open(page, thread, tool) {
  await page.goto(`/?q=${thread}`);
  await page.getByRole("link", { name: new RegExp(`${tool}:`) }).click();
  await expect(page.getByRole("heading", { name: `Tool call ${tool}` })).toBeVisible();
}

async function expectDecided(page, thread, status) {
  // The decision waits for LangGraph's server to resume the thread, which a loaded machine slows.
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible({ timeout: 20_000 });
  await expect(page.locator(".decided")).toContainText(status);
  await page.goto(`/?q=${thread}&status=all`);
  await expect(page.getByRole("list", { name: "Reviews" }).locator(`.status-${status}`).first()).toBeVisible();
}

let server;
test.beforeAll(async () => {
  // The in-memory server keeps its threads here between runs: start empty.
  rmSync("tests/langgraph/.langgraph_api", { recursive: true, force: true });
  server = await startLangGraph();
});
test.afterAll(() => server?.stop());

test("the inbox lists every pending interrupt of both shapes, two of one thread, and a raw value", async ({ page }) => {
  const threads = {};
  for (const kase of ["human", "middleware", "pair", "raw"]) threads[kase] = await interruptedThread(server, kase);
  await connect(page, server);
  await page.goto("/");
  for (const tool of ["send_email", "wire_transfer", "delete_branch", "restart_service", "langgraph_interrupt"]) {
    await expect(page.getByRole("link", { name: new RegExp(`${tool}:`) })).toBeVisible();
  }
  // Descriptions are Markdown: plain in the rows, formatted on the page.
  const row = page.getByRole("link", { name: /send_email:/ });
  await expect(row).toContainText("Send the quarterly numbers to Ana.");
  await expect(row).not.toContainText("**");
  await shoot(page, "langgraph-inbox");
  // A new interrupt appears without a reload.
  await interruptedThread(server, "middleware");
  await expect(page.getByRole("link", { name: /wire_transfer:/ })).toHaveCount(2, { timeout: 10_000 });
  await open(page, threads.human, "send_email");
  await expect(page.locator("blockquote.summary strong")).toHaveText("quarterly numbers");
  await expect(page.locator("blockquote.summary li")).toHaveCount(2);
  await expect(page.getByLabel("Exact call (canonical JSON)")).toContainText('"ana@example.com"');
  await expect(page.getByRole("timer")).toHaveCount(0);
  await shoot(page, "langgraph-review");
  // A value in neither shape is shown as raw JSON with a note, answered with text.
  await open(page, threads.raw, "langgraph_interrupt");
  await expect(page.getByText("unknown shape").first()).toBeVisible();
  await expect(page.getByLabel("Exact call (canonical JSON)")).toContainText("Which region should the backup go to?");
  await expect(page.getByRole("button", { name: "Approve" })).toHaveCount(0);
  await page.getByLabel(/Reason or feedback/).fill("eu");
  await page.getByRole("button", { name: "Respond" }).click();
  await expectDecided(page, threads.raw, "rejected");
  expect(await answerOf(server, threads.raw, "raw")).toBe("eu");
});

test("human interrupts: accept, edit, respond and ignore each resume their thread with that answer", async ({ page }) => {
  await connect(page, server);
  const threads = {};
  for (const answer of ["accept", "edit", "respond", "ignore"]) threads[answer] = await interruptedThread(server, "human");

  await open(page, threads.accept, "send_email");
  await expect(page.getByRole("button", { name: "Deny" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Approve with scope" })).toHaveCount(0);
  await page.getByLabel("Decide as role").fill("ops-lead");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, threads.accept, "approved");
  expect(await answerOf(server, threads.accept, "send_email")).toEqual([{ type: "accept", args: null }]);

  await open(page, threads.edit, "send_email");
  await page.getByLabel("Approve with modifications").check();
  const edited = { to: "ana@example.com", subject: "Q3 numbers", body: "Attached." };
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify(edited, null, 2));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expectDecided(page, threads.edit, "approved");
  expect(await answerOf(server, threads.edit, "send_email")).toEqual([{ type: "edit", args: { action: "send_email", args: edited } }]);

  await open(page, threads.respond, "send_email");
  await page.getByRole("button", { name: "Respond" }).click();
  await expect(page.getByText("a rejection needs a reason")).toBeVisible();
  await page.getByLabel(/Reason or feedback/).fill("Use the Q3 template first.");
  await page.getByRole("button", { name: "Respond" }).click();
  await expectDecided(page, threads.respond, "rejected");
  expect(await answerOf(server, threads.respond, "send_email")).toEqual([{ type: "response", args: "Use the Q3 template first." }]);

  await open(page, threads.ignore, "send_email");
  await page.getByRole("button", { name: "Ignore" }).click();
  await expectDecided(page, threads.ignore, "cancelled");
  expect(await answerOf(server, threads.ignore, "send_email")).toEqual([{ type: "ignore", args: null }]);

  // The decision is in Countersign's history with who decided, across a reload.
  await page.goto(`/?q=${threads.accept}&status=all`);
  await page.getByRole("link", { name: /send_email:/ }).click();
  await expect(page.getByRole("heading", { name: "Decision history" })).toBeVisible();
  await expect(page.locator(".timeline")).toContainText("ops-lead");
  await shoot(page, "langgraph-decided");
});

test("middleware interrupts: approve, edit and reject with a message resume their thread", async ({ page }) => {
  await connect(page, server);
  const threads = {};
  for (const answer of ["approve", "edit", "reject"]) threads[answer] = await interruptedThread(server, "middleware");

  await open(page, threads.approve, "wire_transfer");
  await expect(page.getByRole("button", { name: "Respond" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Ignore" })).toHaveCount(0);
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, threads.approve, "approved");
  expect(await answerOf(server, threads.approve, "wire_transfer")).toEqual({ decisions: [{ type: "approve" }] });

  await open(page, threads.edit, "wire_transfer");
  await page.getByLabel("Approve with modifications").check();
  const edited = { amount: 120, currency: "EUR", to: "DE89 3704 0044 0532 0130 00" };
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify(edited));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expectDecided(page, threads.edit, "approved");
  expect(await answerOf(server, threads.edit, "wire_transfer")).toEqual({
    decisions: [{ type: "edit", edited_action: { name: "wire_transfer", args: edited } }],
  });

  await open(page, threads.reject, "wire_transfer");
  await page.getByLabel(/Reason or feedback/).fill("Invoice 2026-114 was paid last week.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expectDecided(page, threads.reject, "rejected");
  expect(await answerOf(server, threads.reject, "wire_transfer")).toEqual({
    decisions: [{ type: "reject", message: "Invoice 2026-114 was paid last week." }],
  });
});

test("a thread waiting on two interrupts is resumed one interrupt at a time, by id", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "pair");
  await open(page, thread, "restart_service");
  await page.getByLabel(/Reason or feedback/).fill("Not during the billing run.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expectDecided(page, thread, "rejected");
  expect(await answerOf(server, thread, "restart_service")).toEqual({ decisions: [{ type: "reject", message: "Not during the billing run." }] });
  // The other interrupt still waits, and it is still offered only what it allows.
  await open(page, thread, "delete_branch");
  await expect(page.getByLabel("Approve with modifications")).toHaveCount(0);
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, thread, "approved");
  expect(await answerOf(server, thread, "delete_branch")).toEqual([{ type: "accept", args: null }]);
  const final = await call(server, "GET", `/threads/${thread}`);
  expect(final.status).toBe("idle");
});

test("an interrupt asking about two actions is resumed once both are decided, in order", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "batch");
  await open(page, thread, "run_sql");
  await page.getByLabel(/Reason or feedback/).fill("Sessions are in use.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expect(page.getByRole("status").filter({ hasText: "held: this interrupt asks about 1 more action" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Decided" })).toHaveCount(0);
  await shoot(page, "langgraph-held");
  const waiting = await call(server, "GET", `/threads/${thread}`);
  expect(waiting.status, "nothing sent while one action is undecided").toBe("interrupted");
  await open(page, thread, "run_sql"); // a reload keeps the held decision
  await expect(page.getByRole("status").filter({ hasText: "held: this interrupt asks about 1 more action" })).toBeVisible();
  await open(page, thread, "write_file");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, thread, "approved");
  expect(await answerOf(server, thread, "batch")).toEqual({
    decisions: [{ type: "approve" }, { type: "reject", message: "Sessions are in use." }],
  });
  await page.goto(`/?q=${thread}&status=rejected`);
  await expect(page.getByRole("link", { name: /run_sql:/ })).toBeVisible();
});

test("LangChain batched middleware: approve, edit, reject and respond reach the tools and the model exactly", async ({ page }) => {
  await connect(page, server);
  const first = await interruptedThread(server, "refund", "batched");
  const second = await interruptedThread(server, "refund", "batched");
  // Settings say what is connected: the server's graphs, every one reviewed.
  await page.goto("/settings");
  await expect(page.getByText("Graphs on this server:")).toContainText("agent batched per_call tickets");
  await expect(page.getByText(/reviewing every graph on it/)).toBeVisible();
  await shoot(page, "langgraph-settings");

  // First thread: approve the refund, answer the customer question in the tool's place.
  await open(page, first, "ask_customer");
  await expect(page.getByRole("button", { name: "Respond" })).toBeVisible();
  await expect(page.getByLabel("Approve with modifications")).toHaveCount(0);
  await expect(page.getByText(/LangGraph agent batched/)).toBeVisible();
  await page.getByLabel(/Reason or feedback/).fill("Ship it to the office.");
  await page.getByRole("button", { name: "Respond" }).click();
  await expect(page.getByRole("status").filter({ hasText: "held: this interrupt asks about 1 more action" })).toBeVisible();
  await open(page, first, "issue_refund");
  await expect(page.getByRole("button", { name: "Respond" })).toHaveCount(0);
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, first, "approved");
  expect(byTool(await modelSaw(server, first))).toEqual({
    issue_refund: { tool: "issue_refund", status: "success", content: "refunded 42.5 on order A-1001" },
    ask_customer: { tool: "ask_customer", status: "success", content: "Ship it to the office." },
  });

  // Second thread: edit the refund, reject the question with a reason.
  await open(page, second, "issue_refund");
  await page.getByLabel("Approve with modifications").check();
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify({ order_id: "A-1001", amount: 20 }));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByRole("status").filter({ hasText: "held" })).toBeVisible();
  await open(page, second, "ask_customer");
  await page.getByLabel(/Reason or feedback/).fill("We already have the address.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expectDecided(page, second, "rejected");
  const saw = byTool(await modelSaw(server, second));
  expect(saw.issue_refund.content, "the tool ran with the edited arguments").toContain("refunded 20.0 on order A-1001");
  expect(saw.ask_customer).toEqual({
    tool: "ask_customer",
    status: "error",
    content: "User rejected the tool call for `ask_customer` with reason: We already have the address.",
  });
  expect(await runAssistants(server, second)).toEqual([(await call(server, "GET", `/threads/${second}`)).metadata.assistant_id]);
});

test("LangChain per_call middleware: each call answered by its id, the answer checked against its response schema first", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "report", "per_call");
  await page.goto(`/?q=${thread}`);
  // Rows name the real tools, each its own review (none grouped with another tool).
  for (const tool of ["delete_file", "send_email", "run_query"]) {
    await expect(page.getByRole("link", { name: new RegExp(`${tool}:`) })).toBeVisible();
  }
  await expect(page.getByRole("list", { name: "Similar pending calls" })).toHaveCount(0);
  await shoot(page, "langgraph-per-call-inbox");

  await open(page, thread, "delete_file");
  await expect(page.getByRole("button", { name: "Respond" })).toHaveCount(0);
  await expect(page.getByLabel("Approve with modifications")).toHaveCount(0);
  // LangChain's default description leaves nothing out and contradicts nothing.
  await expect(page.locator(".summary-bad")).toHaveCount(0);
  await page.getByLabel(/Reason or feedback/).fill("Keep the report.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expectDecided(page, thread, "rejected");

  // An edit the tool's schema refuses is caught here, naming the field; nothing is sent.
  await open(page, thread, "run_query");
  await page.getByLabel("Approve with modifications").check();
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify({ sql: "SELECT * FROM orders", limit: 5000 }));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "argument `limit`: 5000 is greater than the maximum of 1000" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Decided" })).toHaveCount(0);
  await shoot(page, "langgraph-schema-refused");
  const state = await call(server, "GET", `/threads/${thread}/state`);
  expect(state.interrupts.map((i) => i.value.name).sort()).toEqual(["run_query", "send_email"]);
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify({ sql: "SELECT * FROM orders", limit: 10 }));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expectDecided(page, thread, "approved");

  await open(page, thread, "send_email");
  await page.getByLabel(/Reason or feedback/).fill("Ana is on leave; nothing to send.");
  await page.getByRole("button", { name: "Respond" }).click();
  await expectDecided(page, thread, "rejected");

  const by = byTool(await modelSaw(server, thread));
  expect(by.delete_file).toEqual({
    tool: "delete_file",
    status: "error",
    content: "User rejected the tool call for `delete_file` with reason: Keep the report.",
  });
  expect(by.run_query.content).toContain("ran SELECT * FROM orders with limit 10");
  expect(by.send_email).toEqual({ tool: "send_email", status: "success", content: "Ana is on leave; nothing to send." });
  expect(await runAssistants(server, thread)).toEqual([(await call(server, "GET", `/threads/${thread}`)).metadata.assistant_id]);
});

test("LangChain per_call: two calls of one tool in a thread are a group, each decided and answered by its id", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "two tickets", "tickets");
  await page.goto(`/?q=${thread}`);
  const group = page.getByRole("listitem", { name: `2 similar calls: create_ticket in session ${thread}` });
  await expect(group).toBeVisible();
  // Both were asked at the same instant: in either order.
  await expect(group.getByRole("link")).toHaveCount(2);
  await expect(group.getByRole("link", { name: /Printer on floor 2 is down/ })).toBeVisible();
  await expect(group.getByRole("link", { name: /Order more toner/ })).toBeVisible();
  await shoot(page, "langgraph-group");

  await group.getByRole("button", { name: "Approve each once (2)" }).click();
  // Said once LangGraph confirmed the one run that took both answers.
  await expect(page.getByRole("status").filter({ hasText: "call(s)" })).toHaveText("2 call(s) approved, each with its own decision and token.", { timeout: 30_000 });
  await shoot(page, "langgraph-group-decided");
  const runs = await call(server, "GET", `/threads/${thread}/runs`);
  expect(runs.length, "the first run, then one run resuming both").toBe(2);
  // Each ran once, with the arguments asked, and the model was told of both.
  const by = await modelSaw(server, thread);
  expect(by.map((m) => m.content).sort()).toEqual([
    "opened 'Order more toner' at priority low",
    "opened 'Printer on floor 2 is down' at priority high",
  ]);
  expect(by.every((m) => m.tool === "create_ticket" && m.status === "success")).toBe(true);
  // Each call has its own decision in the history.
  await page.goto(`/?q=${thread}&status=approved`);
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("link", { name: /create_ticket:/ })).toHaveCount(2);
  await expect(page.getByRole("list", { name: "Similar pending calls" })).toHaveCount(0);

  // Denied as a group: neither ran, and the model got the reason for each.
  const denied = await interruptedThread(server, "two more tickets", "tickets");
  await page.goto(`/?q=${denied}`);
  const second = page.getByRole("listitem", { name: `2 similar calls: create_ticket in session ${denied}` });
  await second.getByPlaceholder("Reason to deny").fill("Use the new tracker.");
  await second.getByRole("button", { name: "Deny each (2)" }).click();
  await expect(page.getByRole("status").filter({ hasText: "call(s)" })).toHaveText("2 call(s) rejected, each with its own decision.", { timeout: 30_000 });
  const told = await modelSaw(server, denied);
  expect(told).toEqual([
    { tool: "create_ticket", status: "error", content: "User rejected the tool call for `create_ticket` with reason: Use the new tracker." },
    { tool: "create_ticket", status: "error", content: "User rejected the tool call for `create_ticket` with reason: Use the new tracker." },
  ]);
});

test("one reviewer, three graphs: each thread is resumed by its own assistant", async ({ page }) => {
  await connect(page, server);
  const mine = await interruptedThread(server, "human");
  const batched = await interruptedThread(server, "refund", "batched");
  const perCall = await interruptedThread(server, "report", "per_call");
  await open(page, batched, "issue_refund");
  await page.getByLabel(/Reason or feedback/).fill("No refunds today.");
  await page.getByRole("button", { name: "Reject" }).click();
  await open(page, batched, "ask_customer");
  await page.getByLabel(/Reason or feedback/).fill("Not needed.");
  await page.getByRole("button", { name: "Reject" }).click();
  await expectDecided(page, batched, "rejected");
  const saw = await modelSaw(server, batched);
  expect(saw.map((m) => m.status), "no tool of the batched agent ran").toEqual(["error", "error"]);
  await open(page, mine, "send_email");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expectDecided(page, mine, "approved");
  expect(await answerOf(server, mine, "send_email")).toEqual([{ type: "accept", args: null }]);
  for (const tool of ["delete_file", "send_email", "run_query"]) {
    await open(page, perCall, tool);
    await page.getByRole("button", { name: "Approve", exact: true }).click();
    await expectDecided(page, perCall, "approved");
  }
  expect(byTool(await modelSaw(server, perCall))).toEqual({
    delete_file: { tool: "delete_file", status: "success", content: "deleted reports/q3.csv" },
    send_email: { tool: "send_email", status: "success", content: "sent 'Q3 report' to ana@example.com" },
    run_query: { tool: "run_query", status: "success", content: "ran SELECT * FROM orders with limit 100" },
  });
  for (const thread of [mine, batched, perCall]) {
    const owner = (await call(server, "GET", `/threads/${thread}`)).metadata.assistant_id;
    expect(await runAssistants(server, thread), `thread ${thread} runs only with its own assistant`).toEqual([owner]);
  }
});

test("an answer the graph refuses shows as failed, is not recorded, and the errored thread stays listed", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "guarded");
  await open(page, thread, "pay_supplier");
  await page.getByLabel("Approve with modifications").check();
  const edited = JSON.stringify({ supplier: "Nordwind AG", amount: 5000 });
  await page.getByLabel(/Arguments to approve/).fill(edited);
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "LangGraph did not take your decision: ValueError: payments above 1000 need the finance desk's approval" })).toBeVisible({ timeout: 30_000 });
  await expect(page.getByRole("heading", { name: "Decided" })).toHaveCount(0);
  await expect(page.getByLabel(/Arguments to approve/)).toHaveValue(edited);
  await shoot(page, "langgraph-run-failed");
  const recorded = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.langgraph.review.")).length);
  const before = recorded;
  expect((await call(server, "GET", `/threads/${thread}`)).status).toBe("error");
  // Listed still, marked errored, with the graph's error on its page.
  await page.goto(`/?q=${thread}`);
  const row = page.getByRole("link", { name: /pay_supplier:/ });
  await expect(row).toBeVisible();
  await expect(row.getByText("Thread error")).toBeVisible();
  await row.click();
  await expect(page.getByText(/Its thread’s last run failed: ValueError: payments above 1000/)).toBeVisible();
  await shoot(page, "langgraph-thread-error");
  const after = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.langgraph.review.")).length);
  expect(after, "nothing recorded").toBe(before);
});

test("when the run's outcome cannot be learned, the page says the decision was sent but unconfirmed, and records nothing", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "human");
  await open(page, thread, "send_email");
  // The resume reaches LangGraph; the request that waits for its end is cut.
  await page.route("**/runs/*/join", (route) => route.abort("connectionreset"));
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  const alert = page.getByRole("alert").filter({ hasText: "whether it ran it could not be confirmed" });
  await expect(alert).toBeVisible({ timeout: 30_000 });
  await expect(alert).not.toContainText("nothing was sent");
  await expect(page.getByRole("heading", { name: "Decided" })).toHaveCount(0);
  const recorded = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith("countersign.v1.langgraph.review.")).length);
  expect(recorded).toBe(0);
  // It did run: saying "nothing was sent" would have been false.
  expect(await answerOf(server, thread, "send_email")).toEqual([{ type: "accept", args: null }]);
  const aborted = page.errors.filter((e) => e.includes("ERR_CONNECTION_RESET") || e.includes("Failed to load resource"));
  page.errors.splice(0, page.errors.length, ...page.errors.filter((e) => !aborted.includes(e)));
});

test("with the server stopped, a decision fails visibly, stays on screen, and nothing is recorded", async ({ page }) => {
  await connect(page, server);
  const thread = await interruptedThread(server, "human");
  await open(page, thread, "send_email");
  await page.getByLabel(/Reason or feedback/).fill("Checking first.");
  server.stop();
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(page.getByRole("alert").filter({ hasText: "could not be reached" })).toBeVisible();
  await expect(page.getByRole("heading", { name: "Decided" })).toHaveCount(0);
  await expect(page.getByLabel(/Reason or feedback/)).toHaveValue("Checking first.");
  const recorded = await page.evaluate((thread) =>
    Object.keys(localStorage)
      .filter((k) => k.startsWith("countersign.v1.langgraph.review."))
      .map((k) => JSON.parse(localStorage.getItem(k)))
      .filter((r) => r.target.tool_call.request.sessionId === thread).length, thread);
  expect(recorded).toBe(0);
  await shoot(page, "langgraph-failed");
  // The inbox says the server is unreachable instead of looking empty.
  await page.goto("/");
  await expect(page.getByText("The LangGraph server cannot be reached").first()).toBeVisible({ timeout: 15_000 });
  await shoot(page, "langgraph-unreachable");
  // The browser logs each refused connection; those are this test's point.
  // A request on a connection open when the server stopped is reset instead.
  const refused = page.errors.filter((e) => e.includes("ERR_CONNECTION_REFUSED"));
  expect(refused.length).toBeGreaterThan(0);
  const gone = page.errors.filter((e) => refused.includes(e) || e.includes("ERR_CONNECTION_RESET"));
  page.errors.splice(0, page.errors.length, ...page.errors.filter((e) => !gone.includes(e)));
});
