import type { components } from "./openapi.js";

/**
 * Why a gated call did not run. Every failure is a `NotApproved`: catch that
 * one class and the function is known not to have run.
 */

/** The call did not run; `reviewId` names the review when one was made. */
export class NotApproved extends Error {
  readonly reviewId: string | undefined;

  constructor(message: string, reviewId?: string) {
    super(message);
    this.name = new.target.name;
    this.reviewId = reviewId;
  }
}

/** How a reviewer said no. */
export type DeniedKind = "denied" | "feedback" | "cancelled" | "withdrawn";

/** A reviewer said no: `reason` is their text, `decidedBy` their role. */
export class Denied extends NotApproved {
  readonly reason: string | undefined;
  readonly kind: DeniedKind;
  readonly decidedBy: string | undefined;

  constructor(message: string, reviewId: string, reason: string | undefined, kind: DeniedKind, decidedBy: string | undefined) {
    super(message, reviewId);
    this.reason = reason;
    this.kind = kind;
    this.decidedBy = decidedBy;
  }
}

/** No reviewer decided in time; the request is closed as denied. */
export class TimedOut extends NotApproved {}

/** The server could not be reached, or answered something that is not Countersign's JSON. */
export class Unreachable extends NotApproved {}

/**
 * The token is for another call, or the receipt does not verify with the
 * trusted public key or names another token or call. The token was not spent.
 */
export class ReceiptInvalid extends NotApproved {}

/** Every stable code the server refuses with (the OpenAPI document's `ErrorCode`). */
export const ERROR_CODES = [
  "already_decided",
  "already_exists",
  "already_revoked",
  "body_too_large",
  "busy",
  "cannot_resubmit",
  "cannot_withdraw",
  "changed_meanwhile",
  "cross_site",
  "idempotency_key_required",
  "idempotency_key_reused",
  "internal",
  "invalid_parameter",
  "invalid_request",
  "invalid_target",
  "malformed_json",
  "mail_link_refused",
  "method_not_allowed",
  "no_role",
  "not_found",
  "pairing_refused",
  "policy_refused",
  "provider_unavailable",
  "rate_limited",
  "request_expired",
  "reviewer_keys_off",
  "role_not_allowed",
  "target_not_awaiting_approval",
  "token_unknown",
  "token_expired",
  "token_used",
  "token_hash_mismatch",
  "token_device_mismatch",
  "token_other_approval",
  "unauthorized",
  "unknown_parameter",
  "unreadable_body",
  "unsupported_media_type",
  "wrong_key_kind",
] as const satisfies ReadonlyArray<components["schemas"]["ErrorCode"]>;

/**
 * A stable code to branch on, e.g. `"token_used"`; `"unknown"` for one this
 * SDK does not know (from a newer server: its message still says what happened).
 */
export type ErrorCode = (typeof ERROR_CODES)[number] | "unknown";

/** The code as the SDK types it: a listed one, else `"unknown"`. */
export function errorCode(value: unknown): ErrorCode {
  return (ERROR_CODES as ReadonlyArray<unknown>).includes(value) ? (value as ErrorCode) : "unknown";
}

/**
 * The server refused a request: its `status`, stable `code`, and for an
 * invalid request each problem as `[jsonPointer, message]`.
 */
export class Refused extends NotApproved {
  readonly status: number;
  readonly code: ErrorCode;
  readonly problems: ReadonlyArray<readonly [string, string]>;

  constructor(message: string, status: number, code: ErrorCode, problems: ReadonlyArray<readonly [string, string]>, reviewId?: string) {
    super(message, reviewId);
    this.status = status;
    this.code = code;
    this.problems = problems;
  }
}
