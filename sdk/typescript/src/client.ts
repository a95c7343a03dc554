/**
 * The agent's side of Countersign's HTTP API: ask about a call, wait for the
 * reviewer (the server holds the wait open, no busy polling), withdraw, and
 * redeem an approval's single-use token after checking it offline.
 */
import { type Args, callHash, checkArgs, checkRisk, type RiskTier, type ToolCall } from "./calls.js";
import { Denied, type DeniedKind, errorCode, NotApproved, ReceiptInvalid, Refused, TimedOut, Unreachable } from "./errors.js";
import type { components } from "./openapi.js";
import { publicKey, receiptProblem } from "./receipts.js";

/** The contract's shapes, generated from `crates/server/openapi.json`. */
export type Outcome = components["schemas"]["Outcome"];
export type Token = components["schemas"]["Token"];
export type Receipt = components["schemas"]["Receipt"];
export type ToolCallSubmission = components["schemas"]["ToolCallSubmission"];

/** The longest the server holds one wait open, in seconds; longer waits ask again. */
const LONGEST_WAIT = 60;
/** How long a request waits for a reviewer unless told otherwise. */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** How long past its expiry a wait reads on, for the server to close it. */
const EXPIRY_GRACE_MS = 2_000;

/** Where to ask, as whom, and what to trust. */
export interface Options {
  /** The server's address, e.g. `http://127.0.0.1:8080` (`COUNTERSIGN_URL` by default). */
  url?: string | undefined;
  /** An agent key, `countersign keys add --kind agent` (`COUNTERSIGN_AGENT_KEY` by default). */
  agentKey?: string | undefined;
  /**
   * The server's receipt key (base64, `countersign keys signing-key` or `GET /api/v1/signing-key`;
   * `COUNTERSIGN_PUBLIC_KEY` by default): receipts are checked offline with it.
   */
  publicKey?: string | undefined;
  /** The requester reviewers see (`typescript-agent` by default). */
  agent?: string;
  /** The session grants apply to (one per client by default). */
  session?: string;
  /** Binds each token to this device (`clientDeviceId`): only it may redeem them. */
  device?: string;
  /** The `fetch` to use (the global one by default). */
  fetch?: typeof fetch;
}

/** What `ask` needs besides the call. */
export interface AskOptions {
  risk: RiskTier | string;
  summary: string;
  timeoutMs?: number;
  session?: string;
  /** The run within the session (one per client by default). */
  run?: string;
  editable?: boolean;
  workspace?: string;
}

function randomId(): string {
  return crypto.randomUUID();
}

/** Said once per process when no receipt key is set. */
let uncheckedSaid = false;

/**
 * @internal The server, agent key and receipt key: each the one given, else its own
 * variable (`COUNTERSIGN_URL`, `COUNTERSIGN_AGENT_KEY`, `COUNTERSIGN_PUBLIC_KEY`), each
 * on its own. A `TypeError` naming what is missing; with no receipt key at all, a
 * warning (once) that receipts are not checked.
 */
export function connection(given: Pick<Options, "url" | "agentKey" | "publicKey">): { url: string; agentKey: string; publicKey: string | undefined } {
  const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
  const url = given.url || env["COUNTERSIGN_URL"];
  const agentKey = given.agentKey || env["COUNTERSIGN_AGENT_KEY"];
  const publicKey = given.publicKey || env["COUNTERSIGN_PUBLIC_KEY"] || undefined;
  if (!url || !agentKey) {
    const missing = [!url && "COUNTERSIGN_URL", !agentKey && "COUNTERSIGN_AGENT_KEY"].filter(Boolean).join(" and ");
    throw new TypeError(`set ${missing} (the server's address and an agent key), or pass them`);
  }
  if (publicKey === undefined && !uncheckedSaid) {
    uncheckedSaid = true;
    console.warn(
      "Countersign: no receipt key (COUNTERSIGN_PUBLIC_KEY, or publicKey): approvals are not checked against the server's signature. " +
        "Set it to what `countersign keys signing-key` prints (or GET /api/v1/signing-key).",
    );
  }
  return { url, agentKey, publicKey };
}

/** A Countersign server, asked with an agent key. */
export class Countersign {
  readonly url: string;
  readonly agent: string;
  readonly session: string;
  readonly run: string = `run-${randomId()}`;
  readonly device: string | undefined;
  readonly #key: string;
  readonly #trusted: Promise<CryptoKey> | undefined;
  readonly #fetch: typeof fetch;

  /** Each of `url`, `agentKey` and `publicKey` not given is read from its own variable; a `TypeError` names what is missing. */
  constructor(options: Options = {}) {
    const { url, agentKey, publicKey: key } = connection(options);
    this.url = url.replace(/\/+$/, "");
    this.#key = agentKey;
    this.agent = options.agent ?? "typescript-agent";
    this.session = options.session ?? `sess-${randomId()}`;
    this.device = options.device;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#trusted = key ? publicKey(key) : undefined;
    // A key that cannot be read is reported when it is first needed, not as an unhandled rejection.
    this.#trusted?.catch(() => undefined);
  }

  /** From `COUNTERSIGN_URL`, `COUNTERSIGN_AGENT_KEY` and `COUNTERSIGN_PUBLIC_KEY` (the same as `new Countersign({ agent })`). */
  static fromEnv(options: { agent?: string } = {}): Countersign {
    return new Countersign(options);
  }

  /**
   * The approval of a review asked earlier (by this process or another), as it
   * stands now, to redeem right before its call runs: `Denied`, `TimedOut` or
   * another `NotApproved` when it is not approved.
   */
  async approval(reviewId: string): Promise<Approval> {
    const [status, body] = await this.send("GET", `/reviews/${reviewId}/outcome`);
    if (status !== 200) throw refusal(status, body, reviewId);
    const approved = settle(reviewId, body, undefined);
    if (approved === undefined) throw new NotApproved("no reviewer has decided it yet", reviewId);
    return new Approval(this, reviewId, approved);
  }

  /** Asks a reviewer about one call; resolves with the request once the server has it. */
  async ask(tool: string, args: Args, options: AskOptions): Promise<Request> {
    const risk = checkRisk(options.risk);
    if (!tool) throw new TypeError("the tool's name is empty");
    checkArgs(args);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const body: ToolCallSubmission = {
      requestedByRole: this.agent,
      sessionId: options.session ?? this.session,
      runId: options.run ?? this.run,
      toolCall: { name: tool, args },
      humanSummary: options.summary,
      riskTier: risk,
      expiresAt: new Date(Date.now() + timeoutMs).toISOString(),
      editable: options.editable ?? true,
      ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
      ...(this.device === undefined ? {} : { clientDeviceId: this.device }),
    };
    const [status, answer] = await this.send("POST", "/tool-calls", body);
    if (status !== 201) throw refusal(status, answer);
    const outcome = field(answer, "outcome");
    const reviewId = field(outcome, "confirm_id");
    if (typeof reviewId !== "string") throw new Unreachable("the server's answer names no review");
    return new Request(this, reviewId, { name: tool, args }, timeoutMs);
  }

  /** @internal One API call: the status and the JSON answer, or `Unreachable`. */
  async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<[number, unknown]> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.url}/api/v1${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.#key}`,
          Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (e) {
      throw new Unreachable(`cannot reach ${this.url}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const kind = response.headers.get("content-type") ?? "";
    if (!kind.includes("json")) {
      throw new Unreachable(`${this.url} answered ${response.status} with ${kind || "no content type"}, not Countersign's JSON`);
    }
    try {
      return [response.status, await response.json()];
    } catch (e) {
      throw new Unreachable(`${this.url} answered ${response.status} with unreadable JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** @internal The trusted receipt key, if one was given. */
  trusted(): Promise<CryptoKey> | undefined {
    return this.#trusted;
  }
}

/** A call waiting for a reviewer. */
export class Request {
  constructor(
    readonly client: Countersign,
    readonly reviewId: string,
    readonly call: ToolCall,
    readonly timeoutMs: number,
  ) {}

  /** Waits for the decision: the approval, or `Denied` / `TimedOut` / `Unreachable`. */
  async wait(timeoutMs: number = this.timeoutMs): Promise<Approval> {
    // The server closes the request at its expiry: give it a moment to.
    const deadline = Date.now() + timeoutMs + EXPIRY_GRACE_MS;
    for (;;) {
      const seconds = Math.max(0, Math.min(LONGEST_WAIT, Math.ceil((deadline - Date.now()) / 1000)));
      const [status, body] = await this.client.send("GET", `/reviews/${this.reviewId}/outcome?wait=${seconds}`);
      if (status !== 200) throw refusal(status, body, this.reviewId);
      const approved = settle(this.reviewId, body, timeoutMs);
      if (approved !== undefined) return new Approval(this.client, this.reviewId, approved);
      if (seconds === 0) {
        // Nobody may approve a call that will not run any more.
        await this.withdraw("the agent stopped waiting");
        throw new TimedOut(`no reviewer decided within ${timeoutMs / 1000} s; the request was withdrawn and the call did not run`, this.reviewId);
      }
    }
  }

  /** Withdraws the request (the call will not run); quiet if it was decided meanwhile or the server is gone. */
  async withdraw(reason?: string): Promise<void> {
    try {
      await this.client.send("POST", `/reviews/${this.reviewId}/withdraw`, reason ? { reason } : {});
    } catch (e) {
      if (!(e instanceof NotApproved)) throw e;
    }
  }
}

interface Approved {
  call: ToolCall;
  token: Token;
  receipt: unknown;
  edited: boolean;
  decidedBy: string | undefined;
  byGrant: string | undefined;
}

/** An approved call, not yet run: `call` is exactly what may run; `redeem()` spends its token. */
export class Approval {
  readonly #approved: Approved;

  constructor(
    readonly client: Countersign,
    readonly reviewId: string,
    approved: Approved,
  ) {
    this.#approved = approved;
  }

  /** The exact approved call (the reviewer's edit, if any). */
  get call(): ToolCall {
    return this.#approved.call;
  }
  /** The approved arguments. */
  get args(): Args {
    return this.#approved.call.args;
  }
  /** Whether the reviewer changed the arguments. */
  get edited(): boolean {
    return this.#approved.edited;
  }
  get token(): Token {
    return this.#approved.token;
  }
  /** The signed receipt (`countersign verify` checks it too). */
  get receipt(): unknown {
    return this.#approved.receipt;
  }
  /** The standing grant that approved it without asking, if one did. */
  get approvedByGrant(): string | undefined {
    return this.#approved.byGrant;
  }

  /** Checks the token and receipt offline, then spends the token: run the call right after. */
  async redeem(): Promise<void> {
    const { call, token } = this.#approved;
    await this.check();
    const device = this.client.device === undefined ? {} : { clientDeviceId: this.client.device };
    const [status, answer] = await this.client.send("POST", `/reviews/${this.reviewId}/redeem`, { tokenId: token.tokenId, toolCall: call, ...device });
    if (status !== 200) throw refusal(status, answer, this.reviewId);
  }

  /** Checks the token and receipt offline, spending nothing: `ReceiptInvalid` when the call must not run. */
  async check(): Promise<void> {
    const { call, token, receipt } = this.#approved;
    let hashed: string;
    try {
      hashed = await callHash(call.name, call.args);
    } catch (e) {
      throw new ReceiptInvalid(`the approved call has no canonical form: ${String(e)}`, this.reviewId);
    }
    if (token.toolCallHash !== hashed) {
      throw new ReceiptInvalid("the approval's token is for another call than the one approved; nothing runs", this.reviewId);
    }
    const trusted = this.client.trusted();
    if (trusted !== undefined) {
      let key: CryptoKey;
      try {
        key = await trusted;
      } catch (e) {
        throw new ReceiptInvalid(`the public key cannot be used: ${e instanceof Error ? e.message : String(e)}`, this.reviewId);
      }
      const problem = await receiptProblem(receipt, key, token.tokenId, hashed);
      if (problem !== undefined) throw new ReceiptInvalid(`${problem}; the token was not spent`, this.reviewId);
    }
  }
}

function field(value: unknown, name: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[name] : undefined;
}

/** The error for a refused request: `Refused` naming each problem's path. */
function refusal(status: number, body: unknown, reviewId?: string): NotApproved {
  const error = field(body, "error");
  if (error === null || typeof error !== "object") {
    return new Unreachable(`the server answered ${status} without Countersign's error shape`, reviewId);
  }
  const message = String(field(error, "message") ?? "refused");
  if (status >= 500) return new Unreachable(`the server failed (${status}): ${message}`, reviewId);
  const details = field(error, "details");
  const problems: Array<readonly [string, string]> = Array.isArray(details)
    ? details.map((d) => [String(field(d, "path") ?? ""), String(field(d, "message") ?? "")] as const)
    : [];
  const named = problems.map(([path, said]) => `${path || "/"}: ${said}`).join("; ");
  return new Refused(named ? `${message} (${named})` : message, status, errorCode(field(error, "code")), problems, reviewId);
}

/** An outcome read: undefined while pending, what was approved, or the `NotApproved` that says why not (thrown). */
function settle(reviewId: string, body: unknown, timeoutMs: number | undefined): Approved | undefined {
  const verdict = field(body, "outcome");
  if (verdict !== "TOOL_BLOCKED_PENDING_APPROVAL" && verdict !== "TOOL_DENIED" && verdict !== "APPROVED") {
    throw new Unreachable("the outcome could not be read", reviewId);
  }
  const outcome = body as Outcome;
  if (verdict === "TOOL_BLOCKED_PENDING_APPROVAL") return undefined;
  if (verdict === "TOOL_DENIED") {
    if (outcome.kind === "expired") {
      const within = timeoutMs === undefined ? "in time" : `within ${timeoutMs / 1000} s`;
      throw new TimedOut(`no reviewer decided ${within}; the request expired and the call did not run`, reviewId);
    }
    const by = outcome.decided_by_role;
    const said = `denied by ${by ?? "a reviewer"}${outcome.reason ? `: ${outcome.reason}` : ""}`;
    const kind = (["denied", "feedback", "cancelled", "withdrawn"] as const).find((k) => k === outcome.kind) ?? ("denied" satisfies DeniedKind);
    throw new Denied(said, reviewId, outcome.reason, kind, by);
  }
  let call: unknown = outcome.approved_tool_call;
  if (call === undefined && typeof outcome.approved_call === "string") {
    try {
      call = JSON.parse(outcome.approved_call);
    } catch {
      call = undefined;
    }
  }
  const name = field(call, "name");
  const args = field(call, "args");
  const token = outcome.token;
  if (typeof name !== "string" || args === null || typeof args !== "object" || Array.isArray(args) || typeof token?.tokenId !== "string") {
    throw new Unreachable("the approval carries no readable call and token", reviewId);
  }
  return {
    call: { name, args: args as Args },
    token,
    receipt: outcome.receipt,
    edited: outcome.kind === "edited",
    decidedBy: outcome.decided_by_role,
    byGrant: outcome.approved_by_grant,
  };
}
