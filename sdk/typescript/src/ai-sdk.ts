/**
 * The Vercel AI SDK (`ai`): every tool-approval request of a step (tools
 * declared with `needsApproval`) is decided in Countersign, and answered with
 * the AI SDK's own tool-approval response.
 *
 * ```ts
 * import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
 *
 * const approvals = new CountersignApprovals({ agent: "payments", risk: "R3" });
 * let result = await generateText({ model, tools, messages });
 * messages.push(...result.response.messages);
 * for (let answer; (answer = await approvals.answer(messages)); ) {
 *   messages.push(answer);
 *   result = await generateText({ model, tools, messages });
 *   messages.push(...result.response.messages);
 * }
 * ```
 *
 * Reviews are asked by `vercel-ai:<agent>`, in one session per
 * `CountersignApprovals`. An approval is answered `approved` only after its
 * token was checked and redeemed for exactly the call the model made; the AI
 * SDK runs approved tools with the model's own input, so reviews say
 * `editable: false`. Anything else is answered `approved: false` with a
 * reason the model reads: the reviewer's, or why no decision could be had.
 * The `ai` package is only needed for its types.
 */
import type { ModelMessage, ToolApprovalResponse, ToolModelMessage } from "ai";
import { type Args, checkArgs, checkRisk, type RiskTier } from "./calls.js";
import { Countersign, DEFAULT_TIMEOUT_MS, envConnection } from "./client.js";
import { Denied, NotApproved } from "./errors.js";

/** How the calls of one agent are asked about. */
export interface ApprovalOptions {
  /** The agent's name: reviews are asked by `vercel-ai:<agent>`. */
  agent: string;
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
  /** The session "approve for this session" grants last for (one per `CountersignApprovals` by default). */
  session?: string;
}

/** A call the model made and the AI SDK holds for approval. */
interface Held {
  approvalId: string;
  toolName: string;
  input: unknown;
  providerExecuted: boolean;
}

/** Answers the AI SDK's tool-approval requests through Countersign. */
export class CountersignApprovals {
  readonly #client: Countersign;
  readonly #agent: string;
  readonly #risk: RiskTier;
  readonly #risks: Map<string, RiskTier>;
  readonly #timeoutMs: number;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here, before any run. */
  constructor(options: ApprovalOptions) {
    this.#agent = options.agent;
    this.#risk = checkRisk(options.risk ?? "R2");
    this.#risks = new Map(Object.entries(options.risks ?? {}).map(([tool, tier]) => [tool, checkRisk(tier)]));
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const agent = `vercel-ai:${options.agent}`;
    const session = options.session ?? `vercel-ai-${crypto.randomUUID()}`;
    const where =
      options.url !== undefined && options.agentKey !== undefined
        ? { url: options.url, agentKey: options.agentKey, publicKey: options.publicKey }
        : { ...envConnection(), ...(options.publicKey === undefined ? {} : { publicKey: options.publicKey }) };
    this.#client = new Countersign({ ...where, agent, session });
  }

  /**
   * The tool message that answers every approval request of `messages` not
   * answered yet, once each was decided (asked all at once); `undefined`
   * when none waits. Append it and call the model again.
   */
  async answer(messages: readonly ModelMessage[]): Promise<ToolModelMessage | undefined> {
    const held = waiting(messages);
    if (held.length === 0) return undefined;
    const content = await Promise.all(held.map((call) => this.#decide(call)));
    return { role: "tool", content };
  }

  async #decide(call: Held): Promise<ToolApprovalResponse> {
    const answer = (approved: boolean, reason?: string): ToolApprovalResponse => ({
      type: "tool-approval-response",
      approvalId: call.approvalId,
      approved,
      ...(reason === undefined ? {} : { reason }),
      ...(call.providerExecuted ? { providerExecuted: true } : {}),
    });
    let args: Args;
    try {
      args = checkArgs(call.input);
    } catch (e) {
      return answer(false, `Countersign: the input of ${call.toolName} is not a JSON object (${message(e)}); the call did not run`);
    }
    try {
      const request = await this.#client.ask(call.toolName, args, {
        risk: this.#risks.get(call.toolName) ?? this.#risk,
        summary: `${call.toolName}, asked by the AI SDK agent ${this.#agent}`,
        timeoutMs: this.#timeoutMs,
        editable: false,
      });
      const approval = await request.wait();
      await approval.redeem();
      return answer(true);
    } catch (e) {
      if (e instanceof Denied) return answer(false, `Denied in Countersign by ${e.decidedBy ?? "a reviewer"}: ${e.reason ?? "no reason given"}`);
      if (e instanceof NotApproved) return answer(false, `Countersign: ${e.message}; the call did not run`);
      throw e;
    }
  }
}

/** The approval requests of `messages` with no response yet, with the calls they hold. */
function waiting(messages: readonly ModelMessage[]): Held[] {
  const calls = new Map<string, { toolName: string; input: unknown; providerExecuted: boolean }>();
  const requests: { approvalId: string; toolCallId: string }[] = [];
  const answered = new Set<string>();
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-call") calls.set(part.toolCallId, { toolName: part.toolName, input: part.input, providerExecuted: part.providerExecuted === true });
      else if (part.type === "tool-approval-request") requests.push(part);
      else if (part.type === "tool-approval-response") answered.add(part.approvalId);
    }
  }
  return requests
    .filter((request) => !answered.has(request.approvalId))
    .map((request) => {
      const call = calls.get(request.toolCallId);
      // A request whose call is not in the messages is denied: nothing to show a reviewer.
      return { approvalId: request.approvalId, toolName: call?.toolName ?? "an unknown tool", input: call?.input, providerExecuted: call?.providerExecuted ?? false };
    });
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
