// A real `countersign serve --demo` for the SDK's tests, and a scripted
// reviewer that decides through the server's API.
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BINARY = process.env.COUNTERSIGN_BIN ?? join(REPO, "target/debug/countersign");

/**
 * Starts `countersign serve --demo` on a free port, keeping its data in `data`
 * (a new temporary folder, removed on stop, if not given); resolves with its
 * address and keys.
 */
export async function startServer({ data: given } = {}) {
  const data = given ?? mkdtempSync(join(tmpdir(), "countersign-sdk-"));
  const child = spawn(BINARY, ["serve", "--demo", "--listen", "127.0.0.1:0", "--data", data], { stdio: ["ignore", "pipe", "ignore"] });
  const found = {};
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    if (line.startsWith("countersign: listening on ")) found.url = line.split(" ").at(-1);
    else if (line.startsWith("Demo reviewer key")) found.reviewer = line.split(" ").at(-1);
    else if (line.startsWith("Demo agent key")) found.agent = line.split(" ").at(-1);
    if (found.url && found.reviewer && found.agent) break;
  }
  if (!found.url) throw new Error("countersign serve exited");
  const publicKey = execFileSync(BINARY, ["keys", "--data", data, "signing-key"], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
  const api = async (method, path, body, headers = {}) => {
    const response = await fetch(`${found.url}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${found.reviewer}`, "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    url: found.url,
    agentKey: found.agent,
    reviewerKey: found.reviewer,
    publicKey,
    api,
    /** The pending reviews `agent` asked for. */
    async pending(agent) {
      return (await api("GET", `/reviews?status=pending&requester=${encodeURIComponent(agent)}`)).body.items;
    },
    async review(id) {
      return (await api("GET", `/reviews/${id}`)).body;
    },
    async decide(id, decision) {
      const answer = await api("POST", `/reviews/${id}/decisions`, { decided_by_role: "reviewer", ...decision }, { "Idempotency-Key": `ts-${crypto.randomUUID()}` });
      if (answer.status !== 200) throw new Error(`decision refused: ${JSON.stringify(answer.body)}`);
      return answer.body;
    },
    /**
     * For an agent whose framework cannot run edited arguments: tries an edit
     * of the next review `agent` asks for, then approves it as asked; resolves
     * with the status the edit was answered.
     */
    async refuseEditThenApprove(agent) {
      for (let i = 0; i < 600; i++) {
        const [item] = await this.pending(agent);
        if (item) {
          const id = item.confirm.confirm_id;
          const edit = { decided_by_role: "reviewer", status: "approved", tool_call: { mode: "edit", args: JSON.stringify({ amount: 1, to: "Printer Co" }) } };
          const refused = await api("POST", `/reviews/${id}/decisions`, edit, { "Idempotency-Key": `edit-${id}` });
          await this.decide(id, { status: "approved" });
          return refused.status;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${agent} asked nothing`);
    },
    /**
     * Runs the first ```ts block of docs/`page` as a module of this package,
     * a reviewer approving what `requester` asks: the lines it printed.
     */
    async runGuideExample(page, requester) {
      const example = readFileSync(join(REPO, "docs", page), "utf8").match(/```ts\n([\s\S]*?)```/)[1];
      return (await this.runApproved(example, requester)).trim().split("\n");
    },
    /**
     * Runs `source` as a module of this package in a process of its own, with
     * this server in its environment and `input` as JSON on its standard input,
     * a reviewer approving what `requester` asks (nobody, when it is null): what it printed.
     */
    async runApproved(source, requester, input = null) {
      const file = join(REPO, "sdk/typescript/test", `.run-${crypto.randomUUID()}.mjs`);
      writeFileSync(file, source);
      try {
        const decided = requester === null ? undefined : this.decideWhenAsked(requester, { status: "approved" });
        const env = { ...process.env, COUNTERSIGN_URL: found.url, COUNTERSIGN_AGENT_KEY: found.agent, OPENAI_AGENTS_DISABLE_TRACING: "1" };
        const out = await new Promise((resolve, reject) => {
          const child = execFile(process.execPath, [file], { env, timeout: 60_000 }, (error, stdout, stderr) =>
            error ? reject(new Error(stderr || error.message)) : resolve(stdout),
          );
          child.stdin.end(JSON.stringify(input));
        });
        await decided;
        return out;
      } finally {
        rmSync(file, { force: true });
      }
    },
    /** Decides the next `count` reviews `agent` asks for, as they come. */
    async decideWhenAsked(agent, decision, count = 1) {
      const done = new Set();
      const deadline = Date.now() + 30_000;
      while (done.size < count && Date.now() < deadline) {
        for (const item of await this.pending(agent)) {
          const id = item.confirm.confirm_id;
          if (!done.has(id)) {
            await this.decide(id, decision);
            done.add(id);
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop() {
      child.kill("SIGKILL");
      if (!given) rmSync(data, { recursive: true, force: true });
    },
  };
}

/** A requester name of the test's own. */
export function agentName() {
  return `ts-test-${crypto.randomUUID().slice(0, 8)}`;
}
