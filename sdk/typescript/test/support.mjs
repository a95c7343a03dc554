// A real `countersign serve --demo` for the SDK's tests, and a scripted
// reviewer that decides through the server's API.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
