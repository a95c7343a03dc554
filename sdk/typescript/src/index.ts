/**
 * Countersign for TypeScript agents: one wrapper puts a human reviewer before
 * a function, and the function runs only with what the reviewer approved.
 *
 * ```ts
 * const cs = Countersign.fromEnv();
 * const refund = requireApproval(cs, { tool: "refund", risk: "R3" }, async ({ customerId, amount }) => ...);
 * await refund({ customerId: "cus_42", amount: 120 });
 * ```
 *
 * Every failure is a `NotApproved` (`Denied`, `TimedOut`, `Unreachable`,
 * `ReceiptInvalid`, `Refused`), and the function did not run.
 */
export { type Args, callHash, canonicalJson, type Json, RISK_TIERS, type RiskTier, type ToolCall } from "./calls.js";
export {
  Approval,
  type AskOptions,
  Countersign,
  DEFAULT_TIMEOUT_MS,
  type Options,
  type Outcome,
  type Receipt,
  Request,
  type Token,
  type ToolCallSubmission,
} from "./client.js";
export { Denied, type DeniedKind, ERROR_CODES, type ErrorCode, NotApproved, ReceiptInvalid, Refused, TimedOut, Unreachable } from "./errors.js";
export { type GateOptions, requireApproval } from "./gate.js";
