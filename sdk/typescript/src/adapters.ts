/**
 * What the framework adapters share: where to ask and as whom, the tier of
 * each tool, and the one sentence a model reads when a call may not run.
 */
import { type Args, canonicalJson, checkArgs, checkRisk, type RiskTier, type ToolCall } from "./calls.js";
import { type Approval, Countersign, DEFAULT_TIMEOUT_MS, envConnection, Request } from "./client.js";
import { Denied, NotApproved } from "./errors.js";

/** How the calls of a framework's agents are asked about. */
export interface AdapterOptions {
  /** The server (`COUNTERSIGN_URL` by default). */
  url?: string;
  /** An agent key (`COUNTERSIGN_AGENT_KEY` by default). */
  agentKey?: string;
  /** The server's receipt key (`COUNTERSIGN_PUBLIC_KEY` by default): receipts are checked offline with it. */
  publicKey?: string;
  /** The tier of every call (R2 by default). */
  risk?: RiskTier | string;
  /** A tier per tool name, before `risk`. */
  risks?: Record<string, RiskTier | string>;
  /** How long a reviewer has (5 minutes by default). */
  timeoutMs?: number;
  /** The session "approve for this session" grants last for (one per adapter by default). */
  session?: string;
}

/** A call may run once this resolves to `null`; otherwise the reason the model reads. */
export type Verdict = string | null;

/** @internal One adapter's connection: a client per agent, asked as `<framework>:<agent>`. */
export class Asker {
  readonly #framework: string;
  readonly #where: { url: string; agentKey: string; publicKey: string | undefined };
  readonly #risk: RiskTier;
  readonly #risks: Map<string, RiskTier>;
  readonly #clients = new Map<string, Countersign>();
  readonly timeoutMs: number;
  readonly session: string;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here. */
  constructor(framework: string, options: AdapterOptions) {
    this.#framework = framework;
    this.#risk = checkRisk(options.risk ?? "R2");
    this.#risks = new Map(Object.entries(options.risks ?? {}).map(([tool, tier]) => [tool, checkRisk(tier)]));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.session = options.session ?? `${framework}-${crypto.randomUUID()}`;
    this.#where =
      options.url !== undefined && options.agentKey !== undefined
        ? { url: options.url, agentKey: options.agentKey, publicKey: options.publicKey }
        : { ...envConnection(), ...(options.publicKey === undefined ? {} : { publicKey: options.publicKey }) };
  }

  /** Asks about one call of `agent` without waiting. */
  async ask(agent: string, tool: string, args: Args, editable: boolean): Promise<Request> {
    return this.#client(agent).ask(tool, args, {
      risk: this.#risks.get(tool) ?? this.#risk,
      summary: `${tool}, asked by the ${this.#framework} agent ${agent}`,
      timeoutMs: this.timeoutMs,
      editable,
      session: this.session,
    });
  }

  /** A request asked earlier (by this process or another), to wait for. */
  asked(agent: string, reviewId: string, tool: string, args: Args): Request {
    return new Request(this.#client(agent), reviewId, { name: tool, args }, this.timeoutMs);
  }

  /** Asks about one call and waits: `null` once its token is checked and redeemed, else why not. */
  async decide(agent: string, tool: string, input: unknown, editable: boolean): Promise<Verdict> {
    let args: Args;
    try {
      args = checkArgs(input);
    } catch (e) {
      return `Countersign: the arguments of ${tool} are not a JSON object (${e instanceof Error ? e.message : String(e)}); the call did not run`;
    }
    return settle(this.ask(agent, tool, args, editable), editable ? undefined : { name: tool, args });
  }

  #client(agent: string): Countersign {
    let client = this.#clients.get(agent);
    if (!client) {
      client = new Countersign({ ...this.#where, agent: `${this.#framework}:${agent}`, session: this.session });
      this.#clients.set(agent, client);
    }
    return client;
  }
}

/**
 * Waits for an asked call: `null` once its token is checked and redeemed, else
 * why not. With `runs`, the call the framework will run whatever was approved:
 * an approval of any other call is refused before its token is spent.
 */
export async function settle(asked: Promise<Request> | Request, runs?: ToolCall): Promise<Verdict> {
  let approval: Approval;
  try {
    approval = await (await asked).wait();
    if (runs !== undefined && canonicalJson(approval.call) !== canonicalJson(runs)) {
      return `Countersign: the approval is for another call than ${runs.name} as the model made it; the call did not run`;
    }
    await approval.redeem();
  } catch (e) {
    if (e instanceof Denied) return `Denied in Countersign by ${e.decidedBy ?? "a reviewer"}: ${e.reason ?? "no reason given"}`;
    if (e instanceof NotApproved) return `Countersign: ${e.message}; the call did not run`;
    throw e;
  }
  return null;
}
