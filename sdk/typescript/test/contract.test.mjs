// The generated wire types match the server's OpenAPI document, and the
// README's quickstart runs as written.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { REPO, startServer } from "./support.mjs";

const sdk = join(REPO, "sdk/typescript");

test("the wire types are generated from the OpenAPI document as it is", () => {
  const fresh = join(sdk, "test/.openapi.generated.ts");
  try {
    execFileSync(join(sdk, "node_modules/.bin/openapi-typescript"), [join(REPO, "crates/server/openapi.json"), "-o", fresh], { stdio: "ignore" });
    assert.equal(readFileSync(join(sdk, "src/openapi.ts"), "utf8"), readFileSync(fresh, "utf8"), "run `npm run generate` in sdk/typescript");
  } finally {
    rmSync(fresh, { force: true });
  }
});

test("the error codes are the ones the OpenAPI document lists", async () => {
  const { ERROR_CODES } = await import("../dist/index.js");
  const documented = JSON.parse(readFileSync(join(REPO, "crates/server/openapi.json"), "utf8")).components.schemas.ErrorCode.enum;
  assert.deepEqual([...ERROR_CODES], documented);
});

let server;
before(async () => {
  server = await startServer();
});
after(() => server.stop());

/** The first ```ts block of the SDK's README, of the root README's "Agent SDKs" and of the SDK guide. */
const quickstarts = [
  ["the SDK's README", readFileSync(join(sdk, "README.md"), "utf8")],
  ["the root README", readFileSync(join(REPO, "README.md"), "utf8").split("## Agent SDKs")[1].split("\n## ")[0]],
  ["the TypeScript guide", readFileSync(join(REPO, "docs/typescript.md"), "utf8")],
];

const answers = [
  [{ status: "approved" }, "refunded 120 to cus_42"],
  [{ status: "rejected", reason: "Refunds over 100 need a ticket." }, "not refunded: Refunds over 100 need a ticket."],
];

for (const [where, readme] of quickstarts) for (const [decision, printed] of answers) test(`the quickstart of ${where} runs as written when ${decision.status}`, async () => {
  const quickstart = readme.match(/```ts\n([\s\S]*?)```/)[1];
  // Inside the package, so `@countersign/sdk` resolves to it.
  const file = join(sdk, "test/.quickstart.mjs");
  writeFileSync(file, quickstart);
  try {
    const env = { ...process.env, COUNTERSIGN_URL: server.url, COUNTERSIGN_AGENT_KEY: server.agentKey, COUNTERSIGN_PUBLIC_KEY: server.publicKey };
    const reviewer = server.decideWhenAsked("typescript-agent", decision);
    const ran = await new Promise((resolve, reject) =>
      execFile(process.execPath, [file], { env, timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout))),
    );
    await reviewer;
    assert.equal(ran.trim(), printed);
  } finally {
    rmSync(file, { force: true });
  }
});
