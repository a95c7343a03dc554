// An MCP client and server written with the official Python SDK (PyPI `mcp`,
// in .venv-mcp) talk through `countersign mcp-gate`: the client calls the
// gated `write_note`, a reviewer approves, edits or denies it in the browser,
// and the server's own log says what ran, with which arguments.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect, test } from "@playwright/test";
import { binary, failOnScriptErrors, shoot, startServer } from "./support.mjs";

const PYTHON = process.env.COUNTERSIGN_MCP_PYTHON ?? resolve(".venv-mcp/bin/python");

failOnScriptErrors();
test.describe.configure({ mode: "serial", timeout: 120_000 });

let server, dataDir;
test.beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-mcp-"));
  server = await startServer(dataDir);
});
test.afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The gate as the MCP guide (docs/mcp.md) has a client start it; its server
 * (after `--`) is this test's, its environment names this test's Countersign. */
const documented = JSON.parse(readFileSync("docs/mcp.md", "utf8").match(/```json\n([\s\S]*?)```/)[1]).mcpServers.notes;

test("the MCP guide's client settings start the gate with the keys it reads", () => {
  expect(documented.command).toBe("countersign");
  expect(documented.args[0]).toBe("mcp-gate");
  expect(Object.keys(documented.env).sort()).toEqual(["COUNTERSIGN_AGENT_KEY", "COUNTERSIGN_URL"]);
});

/** Runs the client: `write_note` with `note` through the gate; resolves with
 * the client's answer and the server's log of what ran. */
function writeThroughGate(note) {
  const log = join(mkdtempSync(join(tmpdir(), "countersign-notes-")), "ran.jsonl");
  const gate = [resolve(binary), ...documented.args.slice(0, documented.args.indexOf("--")), "--timeout", "90", "--", PYTHON, resolve("tests/mcp/server.py")];
  const child = spawn(PYTHON, [resolve("tests/mcp/client.py"), "write_note", JSON.stringify(note), "--", ...gate], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NOTES_LOG: log, COUNTERSIGN_URL: server.url, COUNTERSIGN_AGENT_KEY: server.agent },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`the MCP client exited ${code}: ${err}`));
      let ran = [];
      try {
        ran = readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
      } catch {
        // nothing ran
      }
      resolve({ answer: JSON.parse(out.trim()), ran });
    }),
  );
}

async function openAsked(page) {
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
  await page.goto(`${server.url}/?requester=mcp:notes`);
  const row = page.getByRole("link", { name: /write_note: MCP server notes/ });
  await expect(row).toHaveCount(1, { timeout: 30_000 });
  await row.click();
  await expect(page.getByRole("heading", { name: "Tool call write_note" })).toBeVisible();
}

test("an MCP call approved in the browser reaches the server as asked", async ({ page }) => {
  const note = { title: "standup", text: "moved to 10:00" };
  const done = writeThroughGate(note);
  await openAsked(page);
  await expect(page.getByText("asked by mcp:notes")).toBeVisible();
  await shoot(page, "mcp-gate-review");
  await page.getByRole("button", { name: "Approve once" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const { answer, ran } = await done;
  expect(answer).toEqual({ tool: "write_note", is_error: false, text: "wrote standup" });
  expect(ran).toEqual([{ tool: "write_note", arguments: note }]);
});

test("an MCP call edited in the browser reaches the server with the reviewer's arguments", async ({ page }) => {
  const done = writeThroughGate({ title: "standup", text: "cancelled" });
  await openAsked(page);
  const edited = { text: "moved to 10:30", title: "standup" };
  await page.getByLabel("Approve with modifications").check();
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify(edited, null, 2));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const { answer, ran } = await done;
  expect(answer.is_error).toBe(false);
  expect(ran).toEqual([{ tool: "write_note", arguments: edited }]);
});

test("an MCP call denied in the browser never reaches the server; the model reads why", async ({ page }) => {
  const done = writeThroughGate({ title: "all", text: "delete everything" });
  await openAsked(page);
  await page.getByLabel(/^Reason/).fill("Notes are kept for a year.");
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const { answer, ran } = await done;
  expect(answer).toEqual({ tool: "write_note", is_error: true, text: "Countersign: denied by reviewer: Notes are kept for a year." });
  expect(ran).toEqual([]);
});
