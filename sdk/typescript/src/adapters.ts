/**
 * What the framework adapters share: where to ask and as whom, the tier of
 * each tool, one verdict per call, the token spent right before the call runs,
 * and the one sentence a model reads when a call may not run.
 *
 * A framework answers an approval with an object the application may keep and
 * hand back (messages, run state). So an adapter never spends the token when it
 * answers: it spends it in the framework's last step before the tool's body, for
 * exactly the arguments the body gets. A replayed approval then meets a spent
 * token and is the framework's own denial.
 */
import { type Args, callHash, canonicalJson, checkArgs, checkRisk, type RiskTier, type ToolCall } from "./calls.js";
import { Countersign, connection, DEFAULT_TIMEOUT_MS, Request } from "./client.js";
import { Denied, NotApproved, Refused } from "./errors.js";

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
}

/** An approved call whose token is not spent yet: the review that approved it. */
export interface Cleared {
  review: string;
}

/** An approved call, or why it may not run (what the model reads). */
export type Verdict = Cleared | string;

/** @internal One adapter's connection: a client per agent and session, asked as `<framework>:<agent>`. */
export class Asker {
  readonly #framework: string;
  readonly #where: { url: string; agentKey: string; publicKey: string | undefined };
  readonly #risk: RiskTier;
  readonly #risks: Map<string, RiskTier>;
  readonly timeoutMs: number;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here. */
  constructor(framework: string, options: AdapterOptions) {
    this.#framework = framework;
    this.#risk = checkRisk(options.risk ?? "R2");
    this.#risks = new Map(Object.entries(options.risks ?? {}).map(([tool, tier]) => [tool, checkRisk(tier)]));
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#where = connection(options);
  }

  /** Asks about one call of `agent`, in `session`, without waiting. */
  async ask(agent: string, session: string, tool: string, args: Args, editable: boolean): Promise<Request> {
    return this.#client(agent, session).ask(tool, args, {
      risk: this.#risks.get(tool) ?? this.#risk,
      summary: `${tool}, asked by the ${this.#framework} agent ${agent}`,
      timeoutMs: this.timeoutMs,
      editable,
    });
  }

  /** A request asked earlier (by this process or another), to wait for. */
  asked(agent: string, reviewId: string, tool: string, args: Args): Request {
    return new Request(this.#client(agent, undefined), reviewId, { name: tool, args }, this.timeoutMs);
  }

  /** Asks about one call and waits: its review once approved (the token not spent), else why not. */
  async decide(agent: string, session: string, tool: string, input: unknown, editable: boolean): Promise<Verdict> {
    let args: Args;
    try {
      args = checkArgs(input);
    } catch (e) {
      return `Countersign: the arguments of ${tool} are not a JSON object (${e instanceof Error ? e.message : String(e)}); the call did not run`;
    }
    return settle(this.ask(agent, session, tool, args, editable), editable ? undefined : { name: tool, args });
  }

  /**
   * Spends the token of `review` for exactly `tool(input)`, the call about to run:
   * `undefined` when it may run now, else why not (what the model reads).
   */
  async redeemBeforeRun(agent: string, review: string | undefined, tool: string, input: unknown): Promise<string | undefined> {
    if (review === undefined) return `Countersign: this call of ${tool} was not approved in Countersign; the call did not run`;
    try {
      const args = checkArgs(input);
      const approval = await this.#client(agent, undefined).approval(review);
      if (approval.call.name !== tool || approval.token.toolCallHash !== (await callHash(tool, args))) {
        return `Countersign: the approval is for another call than ${tool} as it was about to run; the call did not run`;
      }
      await approval.redeem();
    } catch (e) {
      return refusalText(e);
    }
    return undefined;
  }

  #client(agent: string, session: string | undefined): Countersign {
    return new Countersign({ ...this.#where, agent: `${this.#framework}:${agent}`, ...(session === undefined ? {} : { session }) });
  }
}

/**
 * Waits for an asked call: its review once approved and its receipt checked (the
 * token not spent), else why not. With `runs`, the call the framework will run
 * whatever was approved: an approval of any other call is refused.
 */
export async function settle(asked: Promise<Request> | Request, runs?: ToolCall): Promise<Verdict> {
  try {
    const approval = await (await asked).wait();
    if (runs !== undefined && canonicalJson(approval.call) !== canonicalJson(runs)) {
      return `Countersign: the approval is for another call than ${runs.name} as the model made it; the call did not run`;
    }
    await approval.check();
    return { review: approval.reviewId };
  } catch (e) {
    return refusalText(e);
  }
}

/** What the model reads when a call may not run, said once; anything but a `NotApproved` is thrown on. */
export function refusalText(e: unknown): string {
  if (e instanceof Denied) return `Denied in Countersign by ${e.decidedBy ?? "a reviewer"}: ${e.reason ?? "no reason given"}`;
  if (e instanceof Refused && e.code === "token_used") {
    return "Countersign: this approval was already used to run the call once; a replayed approval does not run it again";
  }
  if (e instanceof NotApproved || e instanceof TypeError) {
    return e.message.includes("did not run") ? `Countersign: ${e.message}` : `Countersign: ${e.message}; the call did not run`;
  }
  throw e;
}
