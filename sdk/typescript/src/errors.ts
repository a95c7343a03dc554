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

/**
 * The server refused a request: its `status`, stable `code`, and for an
 * invalid request each problem as `[jsonPointer, message]`.
 */
export class Refused extends NotApproved {
  readonly status: number;
  readonly code: string;
  readonly problems: ReadonlyArray<readonly [string, string]>;

  constructor(message: string, status: number, code: string, problems: ReadonlyArray<readonly [string, string]>, reviewId?: string) {
    super(message, reviewId);
    this.status = status;
    this.code = code;
    this.problems = problems;
  }
}
