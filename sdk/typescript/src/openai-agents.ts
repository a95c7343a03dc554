/**
 * The OpenAI Agents SDK for JavaScript (`@openai/agents`): every call a run
 * stops on (tools with `needsApproval`) is decided in Countersign, and the run
 * resumes with the SDK's own `state.approve` or `state.reject`.
 *
 * ```ts
 * import { CountersignRuns } from "@countersign/sdk/openai-agents";
 *
 * const runs = new CountersignRuns({ risk: "R3" });
 * const result = await runs.run(agent, "Pay the printer");
 * ```
 *
 * Reviews are asked by `openai-agents:<agent name>`, in the session of the
 * run (one per `run`, kept in a run put aside), so "approve for this session"
 * never covers another run the same `CountersignRuns` serves. A call is
 * approved once a reviewer approved it and its receipt was checked; the run
 * goes on with the agent's tools wrapped so that an approved call's token is
 * spent right before the tool's body, for the model's exact arguments: a run
 * resumed twice from one `PendingRun` does not run a call twice. The SDK runs
 * approved tools with the model's arguments, so reviews say `editable: false`.
 * Anything else rejects the call with a message the model reads. A run
 * waiting for reviewers can be put aside (`ask`) and resumed in another
 * process (`resume`).
 */
import { type Agent, type FunctionTool, run, type RunResult, RunState, type RunToolApprovalItem } from "@openai/agents";
import { type AdapterOptions, Asker, settle, type Verdict } from "./adapters.js";
import { type Args, checkArgs } from "./calls.js";

/** Any agent, as the SDK's own `run` takes it. */
type AnyAgent = Agent<any, any>;

/** A run waiting for reviewers, as text: keep it anywhere, resume it anywhere. */
export interface PendingRun {
  /** The SDK's serialised `RunState`. */
  state: string;
  /** The session the run's reviews are asked in. */
  session: string;
  /** Per call id: the review asked about it, or why it could not be asked. */
  reviews: Record<string, { review: string } | { error: string }>;
}

/** Runs OpenAI Agents SDK agents with their approvals decided in Countersign. */
export class CountersignRuns {
  readonly #asker: Asker;
  readonly #maxTurns: number;

  /** Settings that cannot work (a tier outside R0–R4, no server or key) throw a `TypeError` here, before any run. */
  constructor(options: AdapterOptions & { maxTurns?: number } = {}) {
    this.#asker = new Asker("openai-agents", options);
    this.#maxTurns = options.maxTurns ?? 10;
  }

  /** Runs `agent` on `input` until it no longer stops on a call, each call decided in Countersign (in a session of its own). */
  async run<A extends AnyAgent>(agent: A, input: string, options: { session?: string } = {}): Promise<RunResult<any, A>> {
    const result = await run(agent, input, { maxTurns: this.#maxTurns });
    const session = options.session ?? `openai-agents-${crypto.randomUUID()}`;
    return result.interruptions.length === 0 ? result : this.resume(agent, await this.ask(result, { session }));
  }

  /** Asks about every call `result` stopped on, in `session` (a new one by default), without waiting: the run, put aside. */
  async ask(result: RunResult<any, AnyAgent>, options: { session?: string } = {}): Promise<PendingRun> {
    const session = options.session ?? `openai-agents-${crypto.randomUUID()}`;
    const reviews: PendingRun["reviews"] = {};
    for (const item of result.interruptions) {
      try {
        const request = await this.#asker.ask(item.agent.name, session, toolName(item), argsOf(item), false);
        reviews[callId(item)] = { review: request.reviewId };
      } catch (e) {
        reviews[callId(item)] = { error: e instanceof Error ? e.message : String(e) };
      }
    }
    return { state: result.state.toString(), session, reviews };
  }

  /**
   * Waits for the reviewers of a pending run, answers it, and runs on until it no
   * longer stops on a call; an approved call's token is spent as its tool runs.
   */
  async resume<A extends AnyAgent>(agent: A, pending: PendingRun): Promise<RunResult<any, A>> {
    const cleared = new Map<string, string>();
    const gated = this.#gated(agent, cleared);
    const state = await RunState.fromString(gated, pending.state);
    const items = state.getInterruptions();
    await Promise.all(
      items.map(async (item) => {
        const verdict = item.agent.name === agent.name ? await this.#verdict(item, pending.reviews[callId(item)]) : "Countersign: calls of an agent handed off to are not reviewed here; the call did not run";
        if (typeof verdict === "string") state.reject(item, { message: verdict });
        else {
          cleared.set(callId(item), verdict.review);
          state.approve(item);
        }
      }),
    );
    const result = (await run(gated, state, { maxTurns: this.#maxTurns })) as RunResult<any, A>;
    return result.interruptions.length === 0 ? result : this.resume(agent, await this.ask(result, { session: pending.session }));
  }

  /** `agent` with each function tool spending an approved call's token right before its body runs. */
  #gated<A extends AnyAgent>(agent: A, cleared: Map<string, string>): A {
    const tools = agent.tools.map((tool) => {
      if (tool.type !== "function") return tool;
      const inner = tool as FunctionTool<any, any, any>;
      const invoke: FunctionTool<any, any, any>["invoke"] = async (context, input, details) => {
        const id = details?.toolCall?.callId;
        if (id === undefined || !cleared.has(id)) return inner.invoke(context, input, details);
        let args: unknown;
        try {
          args = JSON.parse(input);
        } catch {
          args = undefined;
        }
        const refused = await this.#asker.redeemBeforeRun(agent.name, cleared.get(id), inner.name, args);
        return refused ?? inner.invoke(context, input, details);
      };
      return { ...inner, invoke };
    });
    return agent.clone({ tools }) as A;
  }

  async #verdict(item: RunToolApprovalItem, asked: PendingRun["reviews"][string] | undefined): Promise<Verdict> {
    if (asked === undefined) return "Countersign: the call was never asked about; it did not run";
    if ("error" in asked) return `Countersign: ${asked.error}; the call did not run`;
    let args: Args;
    try {
      args = argsOf(item);
    } catch (e) {
      return `Countersign: ${e instanceof Error ? e.message : String(e)}; the call did not run`;
    }
    // The SDK runs the call as the model made it: only an approval of exactly that call may let it.
    return settle(this.#asker.asked(item.agent.name, asked.review, toolName(item), args), { name: toolName(item), args });
  }
}

function toolName(item: RunToolApprovalItem): string {
  return item.name ?? "an unnamed tool";
}

function callId(item: RunToolApprovalItem): string {
  const raw = item.rawItem as { callId?: string; id?: string };
  return raw.callId ?? raw.id ?? toolName(item);
}

/** The call's arguments as an object; a `TypeError` saying why not. */
function argsOf(item: RunToolApprovalItem): Args {
  const text = item.arguments;
  if (text === undefined) throw new TypeError(`${toolName(item)} carries no arguments`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TypeError(`the arguments of ${toolName(item)} are not JSON`);
  }
  return checkArgs(parsed);
}
