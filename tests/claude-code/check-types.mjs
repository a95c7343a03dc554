// Checks the hook's fixtures against the types Anthropic publishes for Claude
// Code hooks (npm @anthropic-ai/claude-agent-sdk, pinned): the event the
// hook's tests send is a `PreToolUseHookInput`, and every answer the hook's
// tests expect from it (tests/claude-code/answers.json, compared with the
// hook's real output in crates/server/tests/it/hook.rs) is a `SyncHookJSONOutput`.
// The JSON is written into a TypeScript file with `satisfies`, so its strings
// are checked as the literal values the types allow; `tsc` fails on a
// mismatch. Usage: node tests/claude-code/check-types.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const here = "tests/claude-code";
const event = readFileSync(join(here, "event.json"), "utf8");
const answers = readFileSync(join(here, "answers.json"), "utf8");
const work = mkdtempSync(join(here, ".check-"));
try {
  const file = join(work, "fixtures.ts");
  writeFileSync(
    file,
    `import type { PreToolUseHookInput, SyncHookJSONOutput } from "@anthropic-ai/claude-agent-sdk";\n` +
      `export const event = (${event.trim()}) satisfies PreToolUseHookInput;\n` +
      `export const answers = (${answers.trim()}) satisfies Record<string, SyncHookJSONOutput>;\n`,
  );
  try {
    execFileSync(
      "node_modules/.bin/tsc",
      ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", file],
      { stdio: "inherit" },
    );
  } catch {
    console.error("claude-code hook: a fixture does not match @anthropic-ai/claude-agent-sdk's hook types (above)");
    process.exitCode = 1;
  }
  const count = Object.keys(JSON.parse(answers)).length;
  if (!process.exitCode) console.log(`claude-code hook: the event and ${count} answers match @anthropic-ai/claude-agent-sdk's hook types`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
