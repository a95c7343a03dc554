// Every code block of README.md and docs/*.md marked runnable (```sh,run) is
// run as written. A page's blocks run in order in one shell, as a reader
// pastes them into one terminal (what a block sets, the next one has): in
// one fresh folder, with `countersign` (target/debug) on the PATH and a real
// `countersign serve --demo` keeping its data in that folder's data/, its
// address in COUNTERSIGN_URL, its demo keys in COUNTERSIGN_AGENT_KEY and
// REVIEWER_KEY. A block that exits non-zero fails, and so does a curl that
// gets an HTTP error.
// Run by the test command; alone: node --test tests/docs/
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  test(`${source}: its runnable blocks run as written, in order`, async (t) => {
    const folder = mkdtempSync(join(tmpdir(), "countersign-docs-"));
    const server = await startServer({ data: join(folder, "data") });
    // An HTTP error fails the block: the tests' curl reads this config (a reader's shows the error's body).
    writeFileSync(join(folder, ".curlrc"), "fail-with-body\n");
    const env = {
      ...process.env,
      CURL_HOME: folder,
      PATH: `${join(REPO, "target/debug")}:${process.env.PATH}`,
      COUNTERSIGN_URL: server.url,
      COUNTERSIGN_AGENT_KEY: server.agentKey,
      REVIEWER_KEY: server.reviewerKey,
    };
    // Each block announces itself on stderr, so a failure names the block it came from.
    const script = page.map((block, i) => `echo "::block ${i}" >&2\n${block.code}`).join("\n");
    try {
      const ran = await new Promise((resolve) =>
        execFile("bash", ["-euo", "pipefail", "-c", script], { cwd: folder, env, timeout: 120_000 },
          (error, stdout, stderr) => resolve({ code: error ? (error.code ?? 1) : 0, stdout, stderr })));
      const last = Number([...ran.stderr.matchAll(/^::block (\d+)$/gm)].at(-1)?.[1] ?? 0);
      const output = `${ran.stdout}${ran.stderr.replace(/^::block \d+\n/gm, "")}`;
      assert.equal(ran.code, 0, `the block at ${page[last].where} exited ${ran.code}:\n${output}`);
      t.diagnostic(`${page.length} block(s) ran: ${page.map((b) => b.where).join(", ")}`);
      if (process.env.COUNTERSIGN_DOCS_VERBOSE) t.diagnostic(ran.stdout);
    } finally {
      server.stop();
      rmSync(folder, { recursive: true, force: true });
    }
  });
}
