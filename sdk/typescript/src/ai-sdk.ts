/**
 * The Vercel AI SDK (`ai`): every tool call of a step is decided in
 * Countersign, through the AI SDK's own tool approvals.
 *
 * ```ts
 * import { CountersignApprovals } from "@countersign/sdk/ai-sdk";
 *
 * const approvals = new CountersignApprovals({ agent: "payments", risk: "R3" });
 * const ask = { model, tools, messages, toolApproval: approvals.toolApproval };
 * let result = await generateText(ask);
 * messages.push(...result.response.messages);
 * for (let answer; (answer = await approvals.answer(messages, { session: chatId })); ) {
 *   messages.push(answer);
 *   result = await generateText(ask);
 *   messages.push(...result.response.messages);
 * }
 * ```
 *
 * `toolApproval` holds every call for approval; `answer` asks Countersign about
 * the held calls of `messages` and answers each with the AI SDK's own
 * tool-approval response, naming its review. When the AI SDK then runs an
 * approved call, `toolApproval` is asked again, and spends the review's token
 * right before the tool's body, for the model's exact input: messages handed back
 * again (a retry after a failed model call, even in another process) meet a spent
 * token, and the call is the AI SDK's own `execution-denied`, never run twice.
 *
 * Reviews are asked by `vercel-ai:<agent>`, in the `session` given to `answer`
 * (the conversation, e.g. the chat's id; one of its own per answer when none is
 * given, so a grant never covers another conversation). The AI SDK runs approved
 * tools with the model's own input, so reviews say `editable: false`. Anything
 * else is answered `approved: false` with a reason the model reads: the
 * reviewer's, or why no decision could be had. The `ai` package is only needed
 * for its types.
 */
import type { ModelMessage, ToolApprovalResponse, ToolApprovalStatus, ToolModelMessage } from "ai";
import { type AdapterOptions, Asker } from "./adapters.js";

/** How the calls of one agent are asked about. */
export interface ApprovalOptions extends AdapterOptions {
  /** The agent's name: reviews are asked by `vercel-ai:<agent>`. */
  agent: string;
}

/** What the AI SDK tells `toolApproval` of the call it is about to hold or run. */
export interface HeldCall {
  toolCall: { toolCallId: string; toolName: string; input: unknown };
  messages: ModelMessage[];
}

/** Why a call is held: marks the approval requests Countersign answers. */
const HELD = "Asked in Countersign";
/** The reason of an approved response: names the review whose token the run spends. */
const APPROVED = /^Approved in Countersign: review ([0-9a-f-]{36})$/;

/** A call the model made and the AI SDK holds for approval. */
interface Held {
  approvalId: string;
  toolName: string;
  input: unknown;
  providerExecuted: boolean;
  /** Why it is denied without asking, if it is. */
  unanswerable: string | undefined;
}

/** Answers the AI SDK's tool approvals through Countersign. */
export class CountersignApprovals {
  readonly #asker: Asker;
  readonly #agent: string;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here, before any run. */
  constructor(options: ApprovalOptions) {
    this.#agent = options.agent;
    this.#asker = new Asker("vercel-ai", options);
  }

  /**
   * For `generateText` / `streamText`'s `toolApproval`: holds every new call for
   * approval; an approved call about to run has its review's token spent now, for
   * exactly the model's input, or is denied with why.
   */
  readonly toolApproval = async ({ toolCall, messages }: HeldCall): Promise<ToolApprovalStatus> => {
    // As the AI SDK itself reads them: a call runs on the approvals of the last message.
    const last = messages.at(-1);
    const answers = last?.role === "tool" ? parts([last]) : [];
    const requests = parts(messages).filter((p) => p.type === "tool-approval-request" && p.toolCallId === toolCall.toolCallId);
    const response = answers.find((p) => p.type === "tool-approval-response" && requests.some((r) => r.type === "tool-approval-request" && r.approvalId === p.approvalId));
    if (response?.type !== "tool-approval-response") return { type: "user-approval", reason: HELD };
    if (!response.approved) return { type: "denied", ...(response.reason ? { reason: response.reason } : {}) };
    const review = APPROVED.exec(response.reason ?? "")?.[1];
    const refused = await this.#asker.redeemBeforeRun(this.#agent, review, toolCall.toolName, toolCall.input);
    return refused === undefined ? { type: "approved" } : { type: "denied", reason: refused };
  };

  /**
   * The tool message that answers every approval request of `messages` not
   * answered yet, once each was decided (asked all at once), in `session` (the
   * conversation: a new one per answer by default); `undefined` when none
   * waits. Append it and call the model again.
   */
  async answer(messages: readonly ModelMessage[], options: { session?: string } = {}): Promise<ToolModelMessage | undefined> {
    const held = waiting(messages);
    if (held.length === 0) return undefined;
    const session = options.session ?? `vercel-ai-${crypto.randomUUID()}`;
    const content = await Promise.all(
      held.map(async (call): Promise<ToolApprovalResponse> => {
        // The AI SDK runs an approved tool with the model's input: no edit can reach it.
        const verdict = call.unanswerable ?? (await this.#asker.decide(this.#agent, session, call.toolName, call.input, false));
        return {
          type: "tool-approval-response",
          approvalId: call.approvalId,
          approved: typeof verdict !== "string",
          reason: typeof verdict === "string" ? verdict : `Approved in Countersign: review ${verdict.review}`,
          ...(call.providerExecuted ? { providerExecuted: true } : {}),
        };
      }),
    );
    return { role: "tool", content };
  }
}

/** A part of a message. */
type Part = Exclude<ModelMessage["content"], string>[number];

/** Every part of every message with parts. */
function parts(messages: readonly ModelMessage[]): Part[] {
  return messages.flatMap((m): Part[] => (typeof m.content === "string" ? [] : [...m.content]));
}

/** The approval requests of `messages` with no response yet, with the calls they hold. */
function waiting(messages: readonly ModelMessage[]): Held[] {
  const calls = new Map<string, { toolName: string; input: unknown; providerExecuted: boolean }>();
  const requests: { approvalId: string; toolCallId: string; reason?: string | undefined }[] = [];
  const answered = new Set<string>();
  for (const part of parts(messages)) {
    if (part.type === "tool-call") calls.set(part.toolCallId, { toolName: part.toolName, input: part.input, providerExecuted: part.providerExecuted === true });
    else if (part.type === "tool-approval-request") requests.push(part);
    else if (part.type === "tool-approval-response") answered.add(part.approvalId);
  }
  return requests
    .filter((request) => !answered.has(request.approvalId))
    .map((request) => {
      const call = calls.get(request.toolCallId);
      // A request whose call is not in the messages is denied: nothing to show a reviewer.
      // One not held by `toolApproval` is denied too: nothing would spend its token as it runs.
      const unanswerable =
        call === undefined
          ? "Countersign: the approval request names no call in the messages; the call did not run"
          : request.reason !== HELD
            ? "Countersign: this call was not held by `toolApproval: approvals.toolApproval`, which spends its approval as it runs; the call did not run"
            : undefined;
      return {
        approvalId: request.approvalId,
        toolName: call?.toolName ?? "an unknown tool",
        input: call?.input,
        providerExecuted: call?.providerExecuted ?? false,
        unanswerable,
      };
    });
}
