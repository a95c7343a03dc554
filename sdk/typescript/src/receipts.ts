/**
 * Offline checks of an approval's signed receipt: Ed25519 (WebCrypto) over the
 * receipt body's canonical JSON (RFC 8785), by the server's public key
 * (`countersign keys signing-key`).
 */
import { canonicalJson, type Json } from "./calls.js";

/** The server's public key from its base64 form; a `TypeError` naming what is wrong. */
export async function publicKey(base64: string): Promise<CryptoKey> {
  const raw = decodeBase64(base64.trim());
  if (raw === undefined) throw new TypeError("the public key is not base64");
  if (raw.length !== 32) throw new TypeError(`the public key is ${raw.length} bytes; an Ed25519 key is 32`);
  return crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** What is wrong with `receipt` (undefined: it is sound): signed by `key`, approved, for this token and call. */
export async function receiptProblem(receipt: unknown, key: CryptoKey, tokenId: string, callHash: string): Promise<string | undefined> {
  if (!isObject(receipt) || !isObject(receipt["body"])) return "the approval carries no signed receipt";
  const body = receipt["body"];
  const signature = typeof receipt["signature"] === "string" ? decodeBase64(receipt["signature"]) : undefined;
  if (signature === undefined) return "the receipt has no signature";
  let valid = false;
  try {
    valid = await crypto.subtle.verify("Ed25519", key, signature, new TextEncoder().encode(canonicalJson(body as Json)));
  } catch {
    valid = false;
  }
  if (!valid) return "the receipt was not signed by the trusted key";
  const token = body["token"];
  if (body["status"] !== "approved" || !isObject(token)) return "the receipt does not approve a call";
  if (token["token_id"] !== tokenId) return "the receipt is for another token";
  if (token["tool_call_hash"] !== callHash) return "the receipt is for another call";
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
