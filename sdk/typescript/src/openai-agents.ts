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
 * Reviews are asked by `openai-agents:<agent name>`, in one session per
 * `CountersignRuns`. A call is approved only after its token was checked and
 * redeemed; the SDK runs approved tools with the model's arguments, so reviews
 * say `editable: false`. Anything else rejects the call with a message the
 * model reads. A run waiting for reviewers can be put aside (`ask`) and
 * resumed in another process (`resume`).
 */
import { type Agent, run, type RunResult, RunState, type RunToolApprovalItem } from "@openai/agents";
import { type AdapterOptions, Asker, settle, type Verdict } from "./adapters.js";
import { type Args, checkArgs } from "./calls.js";

/** Any agent, as the SDK's own `run` takes it. */
type AnyAgent = Agent<any, any>;

/** A run waiting for reviewers, as text: keep it anywhere, resume it anywhere. */
export interface PendingRun {
  /** The SDK's serialised `RunState`. */
  state: string;
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

  /** Runs `agent` on `input` until it no longer stops on a call, each call decided in Countersign. */
  async run<A extends AnyAgent>(agent: A, input: string): Promise<RunResult<any, A>> {
    const result = await run(agent, input, { maxTurns: this.#maxTurns });
    return result.interruptions.length === 0 ? result : this.resume(agent, await this.ask(result));
  }

  /** Asks about every call `result` stopped on, without waiting: the run, put aside. */
  async ask(result: RunResult<any, AnyAgent>): Promise<PendingRun> {
    const reviews: PendingRun["reviews"] = {};
    for (const item of result.interruptions) {
      try {
        const request = await this.#asker.ask(item.agent.name, toolName(item), argsOf(item), false);
        reviews[callId(item)] = { review: request.reviewId };
      } catch (e) {
        reviews[callId(item)] = { error: e instanceof Error ? e.message : String(e) };
      }
    }
    return { state: result.state.toString(), reviews };
  }

  /** Waits for the reviewers of a pending run, answers it, and runs on until it no longer stops on a call. */
  async resume<A extends AnyAgent>(agent: A, pending: PendingRun): Promise<RunResult<any, A>> {
    const state = await RunState.fromString(agent, pending.state);
    const items = state.getInterruptions();
    await Promise.all(
      items.map(async (item) => {
        const verdict = await this.#verdict(item, pending.reviews[callId(item)]);
        if (verdict === null) state.approve(item);
        else state.reject(item, { message: verdict });
      }),
    );
    const result = await run(agent, state, { maxTurns: this.#maxTurns });
    return result.interruptions.length === 0 ? result : this.resume(agent, await this.ask(result));
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
