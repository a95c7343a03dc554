"""Offline checks of an approval's signed receipt: Ed25519 (the `cryptography`
package) over the receipt body's canonical JSON (RFC 8785), by the server's
public key (`countersign keys signing-key`, or `GET /api/v1/signing-key`)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def public_key(text: str) -> Ed25519PublicKey:
    """The server's public key from its base64 form; `ValueError` naming what
    is wrong."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except binascii.Error as e:
        raise ValueError(f"the public key is not base64: {e}") from e
    if len(raw) != 32:
        raise ValueError(f"the public key is {len(raw)} bytes; an Ed25519 key is 32")
    return Ed25519PublicKey.from_public_bytes(raw)


def receipt_problem(receipt: Any, key: Ed25519PublicKey, token_id: str, call_hash: str) -> str | None:
    """What is wrong with `receipt` (None: it is sound): signed by `key`,
    approved, for the token `token_id` and the call hashed `call_hash`."""
    if not isinstance(receipt, dict) or not isinstance(receipt.get("body"), dict):
        return "the approval carries no signed receipt"
    body = receipt["body"]
    signature = receipt.get("signature")
    if not isinstance(signature, str):
        return "the receipt has no signature"
    try:
        key.verify(base64.b64decode(signature, validate=True), rfc8785.dumps(body))
    except (InvalidSignature, binascii.Error, ValueError, TypeError):
        return "the receipt was not signed by the trusted key"
    token = body.get("token")
    if body.get("status") != "approved" or not isinstance(token, dict):
        return "the receipt does not approve a call"
    if token.get("token_id") != token_id:
        return "the receipt is for another token"
    if token.get("tool_call_hash") != call_hash:
        return "the receipt is for another call"
    return None
