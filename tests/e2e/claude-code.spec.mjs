// The real Claude Code CLI (npm, pinned) asks through `countersign hook
// claude-code`: it runs in print mode in a project whose settings install the
// hook, against a local stand-in for the model API that asks for one Bash
// call. A reviewer approves, edits or denies that call in the browser, and
// the test checks what Claude Code then did: the command ran as approved or
// edited, or it did not run and Claude was told the reviewer's reason.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { expect, test } from "@playwright/test";
import { binary, failOnScriptErrors, shoot, startServer } from "./support.mjs";
import { startModel } from "./model-stand-in.mjs";

const CLAUDE = resolve("node_modules/.bin/claude");

failOnScriptErrors();
test.describe.configure({ mode: "serial", timeout: 120_000 });

let server, model, dataDir;
test.beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "countersign-claude-"));
  server = await startServer(dataDir);
  model = await startModel();
});
test.afterAll(async () => {
  await server?.stop();
  await model?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The hook's settings exactly as the guide (docs/claude-code.md) tells a developer to write them. */
const documentedSettings = readFileSync("docs/claude-code.md", "utf8").match(/```json\n([\s\S]*?)```/)[1];

/** A project whose `.claude/settings.json` runs the hook before every tool. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), "countersign-project-"));
  mkdirSync(join(dir, ".claude"));
  mkdirSync(join(dir, "home"));
  const settings = JSON.parse(documentedSettings);
  expect(settings.hooks.PreToolUse[0].hooks[0].command).toBe("countersign hook claude-code");
  writeFileSync(join(dir, ".claude", "settings.json"), documentedSettings);
  return dir;
}

/** Runs `claude -p` in `dir`; resolves with its JSON result. */
function runClaude(dir, prompt) {
  const child = spawn(CLAUDE, ["-p", prompt, "--output-format", "json"], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      HOME: join(dir, "home"),
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "sk-stand-in",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      // `countersign` is found on the PATH, as the documented command expects.
      PATH: `${dirname(resolve(binary))}:${process.env.PATH}`,
      COUNTERSIGN_URL: server.url,
      COUNTERSIGN_AGENT_KEY: server.agent,
    },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`claude exited ${code}: ${err}\n${out}`)))),
  );
}

async function connect(page) {
  await page.goto(`${server.url}/settings`);
  await page.getByLabel("Reviewer key").fill(server.reviewer);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await expect(page.getByRole("banner").getByRole("status")).toHaveText("Live");
}

/** Opens the pending review Claude Code asked for, from the inbox. */
async function openAsked(page) {
  await page.goto(`${server.url}/?requester=claude-code`);
  const row = page.getByRole("link", { name: /Bash: (Write out\.txt|Clean the build)/ });
  await expect(row).toHaveCount(1, { timeout: 30_000 });
  await row.click();
  await expect(page.getByRole("heading", { name: "Tool call Bash" })).toBeVisible();
}

/** What Claude was told about its tool call (the tool result it was sent). */
function toolResultSent() {
  for (const request of [...model.requests].reverse()) {
    for (const message of request.messages ?? []) {
      const result = Array.isArray(message.content) && message.content.find((c) => c.type === "tool_result");
      if (result) return result;
    }
  }
  return null;
}

test("Claude Code's Bash call runs once the reviewer approves it in the browser", async ({ page }) => {
  const dir = project();
  model.next({ name: "Bash", input: { command: "echo approved > out.txt", description: "Write out.txt" } });
  await connect(page);
  const result = runClaude(dir, "Write out.txt");
  await openAsked(page);
  await expect(page.getByLabel("Exact call (canonical JSON)")).toContainText("echo approved > out.txt");
  await shoot(page, "claude-code-review");
  await page.getByRole("button", { name: "Approve once" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const done = await result;
  expect(done.permission_denials).toEqual([]);
  expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("approved\n");
  rmSync(dir, { recursive: true, force: true });
});

test("an edit made in the browser is what Claude Code runs", async ({ page }) => {
  const dir = project();
  model.next({ name: "Bash", input: { command: "echo asked > out.txt", description: "Write out.txt" } });
  await connect(page);
  const result = runClaude(dir, "Write out.txt");
  await openAsked(page);
  await page.getByLabel("Approve with modifications").check();
  await page.getByLabel(/Arguments to approve/).fill(JSON.stringify({ command: "echo edited > out.txt", description: "Write out.txt" }, null, 2));
  await page.getByRole("button", { name: "Approve edited call" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const done = await result;
  expect(done.permission_denials).toEqual([]);
  expect(readFileSync(join(dir, "out.txt"), "utf8")).toBe("edited\n");
  // The page and the inbox say what was approved, not what was asked.
  const changed = "approved with changes: command echo asked > out.txt → echo edited > out.txt";
  await page.reload();
  await expect(page.locator("#review-title")).toContainText(changed);
  await shoot(page, "review-approved-with-changes");
  await page.goto(`${page.url().split("/reviews/")[0]}/?status=approved`);
  await expect(page.getByRole("list", { name: "Reviews" }).getByRole("listitem").filter({ hasText: changed })).toHaveCount(1);
  await shoot(page, "inbox-approved-with-changes");
  rmSync(dir, { recursive: true, force: true });
});

test("a call the reviewer denies does not run, and Claude is told the reviewer's reason", async ({ page }) => {
  const dir = project();
  model.next({ name: "Bash", input: { command: "rm -rf build && echo gone > out.txt", description: "Clean the build" } });
  await connect(page);
  const result = runClaude(dir, "Clean the build");
  await openAsked(page);
  await page.getByLabel(/^Reason/).fill("Keep the build for the release notes.");
  await page.getByRole("button", { name: "Deny" }).click();
  await expect(page.getByRole("heading", { name: "Decided" })).toBeVisible();
  const done = await result;
  expect(done.permission_denials.map((d) => d.tool_name)).toEqual(["Bash"]);
  expect(existsSync(join(dir, "out.txt"))).toBe(false);
  const told = toolResultSent();
  expect(JSON.stringify(told.content)).toContain("Denied in Countersign by reviewer: Keep the build for the release notes.");
  rmSync(dir, { recursive: true, force: true });
});
