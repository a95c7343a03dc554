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
import { type AdapterOptions, Asker } from "./adapters.js";

/** How the calls of one agent are asked about. */
export interface ApprovalOptions extends AdapterOptions {
  /** The agent's name: reviews are asked by `vercel-ai:<agent>`. */
  agent: string;
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
  readonly #asker: Asker;
  readonly #agent: string;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here, before any run. */
  constructor(options: ApprovalOptions) {
    this.#agent = options.agent;
    this.#asker = new Asker("vercel-ai", options);
  }

  /**
   * The tool message that answers every approval request of `messages` not
   * answered yet, once each was decided (asked all at once); `undefined`
   * when none waits. Append it and call the model again.
   */
  async answer(messages: readonly ModelMessage[]): Promise<ToolModelMessage | undefined> {
    const held = waiting(messages);
    if (held.length === 0) return undefined;
    const content = await Promise.all(
      held.map(async (call): Promise<ToolApprovalResponse> => {
        // The AI SDK runs an approved tool with the model's input: no edit can reach it.
        const verdict = await this.#asker.decide(this.#agent, call.toolName, call.input, false);
        return {
          type: "tool-approval-response",
          approvalId: call.approvalId,
          approved: verdict === null,
          ...(verdict === null ? {} : { reason: verdict }),
          ...(call.providerExecuted ? { providerExecuted: true } : {}),
        };
      }),
    );
    return { role: "tool", content };
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
