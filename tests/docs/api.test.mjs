// The HTTP API reference (docs/api.md) against the OpenAPI document the
// server is checked against: a section for every operation and none for an
// operation that does not exist, each with a runnable curl example of that
// method and path (run by examples.test.mjs) and its "Answers:" naming exactly
// the statuses the document gives it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO } from "../../sdk/typescript/test/support.mjs";

const openapi = JSON.parse(readFileSync(join(REPO, "crates/server/openapi.json"), "utf8"));
const documented = new Map();
for (const [path, operations] of Object.entries(openapi.paths)) {
  for (const [method, operation] of Object.entries(operations)) {
    if (["get", "post", "put", "patch", "delete"].includes(method)) {
      documented.set(`${method.toUpperCase()} /api/v1${path}`, Object.keys(operation.responses).sort());
    }
  }
}

const page = readFileSync(join(REPO, "docs/api.md"), "utf8");
const sections = new Map(
  page.split(/^## /m).slice(1)
    .filter((section) => /^(GET|POST|PUT|PATCH|DELETE) \//.test(section))
    .map((section) => [section.split("\n")[0].trim(), section]),
);

test("the reference has a section for each operation of the OpenAPI document, and no other", () => {
  assert.deepEqual([...sections.keys()].sort(), [...documented.keys()].sort());
});

for (const [operation, statuses] of documented) {
  test(`${operation}: a runnable curl example and its answers`, () => {
    const section = sections.get(operation);
    assert.ok(section, `docs/api.md has no section "## ${operation}"`);
    const [method, path] = operation.split(" ");
    // {confirm_id} and the like are shell variables or substitutions in the example.
    const url = new RegExp(`\\$COUNTERSIGN_URL${path.replace(/\{[^}]+\}/g, "[^/?\"]+").replace(/\./g, "\\.")}(["?]|$)`, "m");
    const examples = [...section.matchAll(/^```sh,run\n([\s\S]*?)^```$/gm)].map(([, code]) => code);
    assert.ok(examples.some((code) => /\bcurl\b/.test(code) && url.test(code)), `${operation}: no runnable curl of ${path}`);
    if (method === "POST") assert.ok(examples.some((code) => /-d |-X POST/.test(code)), `${operation}: the example does not POST`);
    const answers = section.match(/^Answers: (.*)$/m)?.[1];
    assert.ok(answers, `${operation}: no "Answers:" line`);
    assert.deepEqual([...answers.matchAll(/\b([1-5]\d\d)\b/g)].map(([, code]) => code).sort(), statuses, `${operation}: the statuses of its "Answers:" line`);
  });
}
