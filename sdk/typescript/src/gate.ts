/**
 * `requireApproval`: a reviewer before a function. The call is built from the
 * tool's name and the function's one argument object, asked about, waited
 * for, checked and redeemed; only then does the function run, with the
 * approved arguments (the reviewer's edit, if any). Otherwise a `NotApproved`
 * says why, and it did not run.
 */
import { type Args, callHash, checkArgs, checkRisk, type RiskTier } from "./calls.js";
import { type Countersign, DEFAULT_TIMEOUT_MS } from "./client.js";
import { NotApproved } from "./errors.js";

/** How a gated function is asked about. */
export interface GateOptions<A extends Args> {
  /** The name reviewers see (the function's name by default). */
  tool?: string;
  /** The risk tier, R0–R4 (R2 by default). */
  risk?: RiskTier | string;
  /** What reviewers read first: a text, or one made from the arguments (it runs before anything is sent). */
  summary?: string | ((args: A) => string);
  /** How long a reviewer has (5 minutes by default). */
  timeoutMs?: number;
  /** False when the function must only ever run with the arguments it was called with. */
  editable?: boolean;
  /** The session standing grants apply to (the client's by default). */
  session?: string;
  /** The workspace, for "always for this workspace" grants. */
  workspace?: string;
}

/**
 * `fn` behind a reviewer: the returned function takes the same argument
 * object and resolves with what `fn` returns once it ran as approved, or
 * rejects with a `NotApproved` (`Denied`, `TimedOut`, `Unreachable`,
 * `ReceiptInvalid`, `Refused`) and `fn` did not run.
 */
export function requireApproval<A extends Args, R>(
  cs: Countersign,
  options: GateOptions<A>,
  fn: (args: A) => R | Promise<R>,
): (args: A) => Promise<Awaited<R>> {
  const tool = options.tool ?? fn.name;
  if (!tool) throw new TypeError("name the tool: `requireApproval(cs, {tool: \"...\"}, fn)` (the function has no name)");
  const risk = checkRisk(options.risk ?? "R2");
  return async (args: A): Promise<Awaited<R>> => {
    const asked = checkArgs(args);
    const summary = summarize(tool, options.summary, args);
    const request = await cs.ask(tool, asked, {
      risk,
      summary,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      editable: options.editable ?? true,
      ...(options.session === undefined ? {} : { session: options.session }),
      ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
    });
    const approval = await request.wait();
    if (approval.call.name !== tool) {
      throw new NotApproved(`the approval is for \`${approval.call.name}\`, not \`${tool}\`; nothing runs`, approval.reviewId);
    }
    // Approved as asked: run with the very values given (RFC 8785 writes 1.0 as 1).
    const same = (await callHash(tool, approval.args)) === (await callHash(tool, asked));
    const runWith = same ? args : (approval.args as A);
    await approval.redeem();
    return await fn(runWith);
  };
}

function summarize<A extends Args>(tool: string, summary: GateOptions<A>["summary"], args: A): string {
  if (typeof summary === "string") return summary;
  if (summary !== undefined) {
    const text = summary(args);
    if (typeof text !== "string") throw new TypeError(`the summary of \`${tool}\` must be a string`);
    return text;
  }
  const shown = Object.entries(args)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(", ");
  const text = `${tool}(${shown})`;
  return text.length <= 300 ? text : `${text.slice(0, 299)}…`;
}
