/**
 * Tool calls as Countersign hashes them: `{name, args}`, canonical JSON
 * (RFC 8785, the `canonicalize` package) and SHA-256 (WebCrypto).
 */
import canonicalize from "canonicalize";

/** The risk tiers, lowest first. */
export const RISK_TIERS = ["R0", "R1", "R2", "R3", "R4"] as const;
/** A risk tier. */
export type RiskTier = (typeof RISK_TIERS)[number];

/** A JSON value as Countersign sends it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** A call's arguments. */
export type Args = { [key: string]: Json };
/** `{name, args}`: what is hashed, approved and run. */
export interface ToolCall {
  name: string;
  args: Args;
}

/** `risk` when it is a tier Countersign knows; a `RangeError` otherwise. */
export function checkRisk(risk: string): RiskTier {
  if (!(RISK_TIERS as readonly string[]).includes(risk)) {
    throw new RangeError(`risk ${JSON.stringify(risk)} is not a risk tier: choose one of ${RISK_TIERS.join(", ")}`);
  }
  return risk as RiskTier;
}

/** A `TypeError` naming the argument when `args` holds anything but plain JSON. */
export function checkArgs(args: unknown): Args {
  if (!isPlainObject(args)) {
    throw new TypeError("the arguments must be a plain object of JSON values");
  }
  for (const [name, value] of Object.entries(args)) {
    const problem = notJson(value);
    if (problem !== undefined) {
      throw new TypeError(`argument \`${name}\` cannot be sent for review: ${problem}`);
    }
  }
  return args as Args;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function notJson(value: unknown): string | undefined {
  switch (typeof value) {
    case "string":
      return value.isWellFormed() ? undefined : "a string with a lone surrogate";
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${value} is not a JSON number`;
    case "object":
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (const item of value) {
          const problem = notJson(item);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      if (!isPlainObject(value)) return `a ${value.constructor?.name ?? "non-plain object"} is not JSON`;
      for (const item of Object.values(value)) {
        const problem = notJson(item);
        if (problem !== undefined) return problem;
      }
      return undefined;
    default:
      return `a ${typeof value} is not JSON`;
  }
}

/** RFC 8785 canonical JSON of a value. */
export function canonicalJson(value: Json | ToolCall): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("the value has no canonical JSON form");
  return text;
}

/** Lowercase hex SHA-256 of the call's canonical JSON: what a token's `toolCallHash` must be. */
export async function callHash(name: string, args: Args): Promise<string> {
  return sha256Hex(canonicalJson({ name, args }));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
