// Countersign as the reviewer's inbox of a real LangGraph server (`langgraph
// dev` from PyPI, in memory, with the graph in tests/langgraph/): every pending
// interrupt of both shapes is listed, each decision resumes its thread, and the
// graph's state read back from the server holds exactly the answer given.
// With the server stopped, a decision fails visibly and nothing is recorded.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { expect, test } from "@playwright/test";
import { failOnScriptErrors, shoot } from "./support.mjs";

const LANGGRAPH = process.env.LANGGRAPH_BIN ?? `${process.cwd()}/.venv-langgraph/bin/langgraph`;

failOnScriptErrors();
test.describe.configure({ mode: "serial", timeout: 120_000 });

/** A port of 127.0.0.1 free now. */
function freePort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `langgraph dev` on 127.0.0.1 and waits until it answers (it prints
 * the address it took: another port when the one asked for is taken). */
async function startLangGraph() {
  const port = String(await freePort());
  const child = spawn(LANGGRAPH, ["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", port, "--config", "langgraph.json"], {
    cwd: "tests/langgraph",
    detached: true,
    env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`langgraph dev did not start in 90 s:\n${log}`)), 90_000);
    const read = (chunk) => {
      log += chunk.toString();
      const found = log.replace(/\x1b\[[0-9;]*m/g, "").match(/API: (http:\/\/127\.0\.0\.1:\d+)/);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => reject(new Error(`langgraph dev exited (${code}):\n${log}`)));
  });
  for (let i = 0; i < 120; i++) {
    const ok = await fetch(`${url}/ok`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const stop = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  return { url, stop };
}

async function call(server, method, path, body) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.ok, `${method} ${path}: ${response.status}`).toBe(true);
  return response.json();
}

/** A new thread of the test graph, run until it waits on a human. */
async function interruptedThread(server, kase) {
  const thread = await call(server, "POST", "/threads", {});
  const run = await call(server, "POST", `/threads/${thread.thread_id}/runs/wait`, { assistant_id: "agent", input: { case: kase } });
  expect(run.__interrupt__?.length, `case ${kase} interrupts`).toBeGreaterThan(0);
  return thread.thread_id;
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
  await page.getByLabel("Assistant or graph id").fill("agent");
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
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  await expect(page.locator(".decided")).toContainText(status);
  await page.goto(`/?q=${thread}&status=all`);
  await expect(page.getByRole("list", { name: "Reviews" }).locator(`.status-${status}`)).toBeVisible();
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
  const refused = page.errors.filter((e) => e.includes("ERR_CONNECTION_REFUSED"));
  expect(refused.length).toBeGreaterThan(0);
  page.errors.splice(0, page.errors.length, ...page.errors.filter((e) => !refused.includes(e)));
});
