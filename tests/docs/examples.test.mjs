// Every code block of README.md and docs/*.md marked runnable (```sh,run) is
// run as written. A page's blocks run in order, as a reader follows them: in
// one fresh folder, with `countersign` (target/debug) on the PATH and a real
// `countersign serve --demo` keeping its data in that folder's data/, its
// address in COUNTERSIGN_URL, its demo keys in COUNTERSIGN_AGENT_KEY and
// REVIEWER_KEY. A block that exits non-zero fails.
// Run by the test command; alone: node --test tests/docs/
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { REPO, startServer } from "../../sdk/typescript/test/support.mjs";

const sources = ["README.md", ...readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const blocks = sources.flatMap((source) => {
  const text = readFileSync(join(REPO, source), "utf8");
  return [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)]
    .filter(([, info]) => info.split(",").slice(1).includes("run"))
    .map((match) => ({
      where: `${source}:${text.slice(0, match.index).split("\n").length}`,
      language: match[1].split(",")[0],
      code: match[2],
    }));
});

test("the docs have runnable blocks, each in a language this runner runs", () => {
  assert.ok(blocks.length >= 4, `found ${blocks.length}`);
  for (const block of blocks) assert.equal(block.language, "sh", `${block.where}: only sh blocks are run`);
});

for (const source of sources) {
  const page = blocks.filter((block) => block.where.startsWith(`${source}:`));
  if (page.length === 0) continue;
  test(`${source}: its runnable blocks run as written`, async (t) => {
    const folder = mkdtempSync(join(tmpdir(), "countersign-docs-"));
    const server = await startServer({ data: join(folder, "data") });
    const env = {
      ...process.env,
      PATH: `${join(REPO, "target/debug")}:${process.env.PATH}`,
      COUNTERSIGN_URL: server.url,
      COUNTERSIGN_AGENT_KEY: server.agentKey,
      REVIEWER_KEY: server.reviewerKey,
    };
    try {
      for (const block of page) await t.test(block.where, async () => {
        const ran = await new Promise((resolve) =>
          execFile("bash", ["-euo", "pipefail", "-c", block.code], { cwd: folder, env, timeout: 60_000 },
            (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr })));
        assert.equal(ran.code, 0, `${block.where} exited ${ran.code}:\n${ran.stdout}${ran.stderr}`);
      });
    } finally {
      server.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
}
