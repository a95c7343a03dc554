//! Receipts checked offline: a receipt (or an outcome or answer carrying one)
//! is what the holder of the server's Ed25519 key signed, before anything runs
//! on its word. The server signs them (`countersign_server::signing`).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use countersign_domain::wire::{Receipt, ReceiptBody, RECEIPT_VERSION};
use ed25519_dalek::pkcs8::DecodePublicKey;
use ed25519_dalek::{Signature, VerifyingKey};
use std::path::Path;

/// Why a receipt does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The public key given is not one.
    #[error("the public key is not an Ed25519 public key (give the base64 text `countersign keys signing-key` prints, or a PEM file): {0}")]
    PublicKey(String),
    /// The receipt is not a receipt.
    #[error("not a Countersign receipt: {0}")]
    Malformed(String),
    /// Written in a format this program does not know.
    #[error("receipt version {0} is not one this program reads (it reads {RECEIPT_VERSION})")]
    Version(u32),
    /// Signed by a key other than the trusted one.
    #[error("signed by another key ({0}), not the one given")]
    OtherKey(String),
    /// The signature does not cover this body: it was changed after signing.
    #[error(
        "the signature does not match the receipt: it was changed after it was signed, or forged"
    )]
    BadSignature,
}

/// Reads a public key: the base64 text of its 32 bytes, or a PEM
/// `PUBLIC KEY` (SubjectPublicKeyInfo).
pub fn parse_public_key(text: &str) -> Result<VerifyingKey, VerifyError> {
    let text = text.trim();
    if text.starts_with("-----BEGIN") {
        return VerifyingKey::from_public_key_pem(text)
            .map_err(|e| VerifyError::PublicKey(e.to_string()));
    }
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| VerifyError::PublicKey(e.to_string()))?;
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|b: Vec<u8>| VerifyError::PublicKey(format!("{} bytes, not 32", b.len())))?;
    VerifyingKey::from_bytes(&bytes).map_err(|e| VerifyError::PublicKey(e.to_string()))
}

/// Checks a receipt against the trusted key, offline: its body is what the
/// holder of that key signed.
pub fn verify(receipt: &Receipt, trusted: &VerifyingKey) -> Result<(), VerifyError> {
    if receipt.body.version != RECEIPT_VERSION {
        return Err(VerifyError::Version(receipt.body.version));
    }
    let named = parse_public_key(&receipt.public_key)
        .map_err(|_| VerifyError::Malformed("its public_key is not a key".into()))?;
    if named != *trusted {
        return Err(VerifyError::OtherKey(receipt.public_key.clone()));
    }
    let signature = STANDARD
        .decode(&receipt.signature)
        .ok()
        .and_then(|b| <[u8; 64]>::try_from(b).ok())
        .ok_or_else(|| VerifyError::Malformed("its signature is not 64 bytes of base64".into()))?;
    let bytes = receipt
        .body
        .signed_bytes()
        .map_err(|e| VerifyError::Malformed(e.to_string()))?;
    trusted
        .verify_strict(&bytes, &Signature::from_bytes(&signature))
        .map_err(|_| VerifyError::BadSignature)
}

/// Reads a public key given as its text or as a file that holds it.
pub fn public_key_from_arg(arg: &str) -> Result<VerifyingKey, String> {
    let path = Path::new(arg.trim());
    if path.is_file() {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        return parse_public_key(&text).map_err(|e| format!("{}: {e}", path.display()));
    }
    parse_public_key(arg).map_err(|e| e.to_string())
}

/// Finds the receipt in a receipt, an outcome or an answer (`{review, outcome}`).
pub fn receipt_in(value: &serde_json::Value) -> Result<Receipt, VerifyError> {
    let found = if value.get("signature").is_some() {
        value
    } else if let Some(receipt) = value.get("receipt") {
        receipt
    } else if let Some(receipt) = value.get("outcome").and_then(|o| o.get("receipt")) {
        receipt
    } else {
        return Err(VerifyError::Malformed(
            "no receipt here: give a receipt, or an outcome or answer that carries one (a pending review has none)".into(),
        ));
    };
    serde_json::from_value(found.clone()).map_err(|e| VerifyError::Malformed(e.to_string()))
}

/// `countersign verify RECEIPT --public-key KEY`: 0 valid (and what it
/// states), 1 not valid (and why), 2 the file or key cannot be read.
pub fn verify_file(file: &Path, public_key: &str) -> std::process::ExitCode {
    use std::process::ExitCode;
    let trusted = match public_key_from_arg(public_key) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("countersign: {e}");
            return ExitCode::from(2);
        }
    };
    let value = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}")))
    {
        Ok(value) => value,
        Err(e) => {
            eprintln!("countersign: {}: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    match receipt_in(&value).and_then(|r| verify(&r, &trusted).map(|()| r)) {
        Ok(receipt) => {
            println!("{}: valid. {}", file.display(), describe(&receipt.body));
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{}: NOT valid: {e}", file.display());
            ExitCode::from(1)
        }
    }
}

/// What a receipt states, in one line.
fn describe(body: &ReceiptBody) -> String {
    let decisions: Vec<String> = body
        .decisions
        .iter()
        .map(|d| {
            let by = match (&d.decided_by_person, &d.decided_by_owner, &d.decided_by_key) {
                (Some(person), _, Some(key)) => {
                    let email = person.email.as_ref().map(|e| format!(" <{e}>"));
                    format!(
                        "{}{} ({} at {}, {key})",
                        person.name.as_deref().unwrap_or(&person.subject),
                        email.unwrap_or_default(),
                        person.subject,
                        person.issuer
                    )
                }
                (None, Some(owner), Some(key)) => format!("{owner} ({key})"),
                (_, None, Some(key)) => key.clone(),
                (_, _, None) => "the server".to_owned(),
            };
            let channel = d.channel.map(|c| format!(" {}", c.phrase()));
            format!(
                "{} as {} by {by}{} at {}",
                d.status,
                d.decided_by_role,
                channel.unwrap_or_default(),
                d.decided_at
            )
        })
        .collect();
    let mut text = format!(
        "Review {} is {} ({}; rule {})",
        body.confirm_id,
        body.status,
        decisions.join("; "),
        body.rule
    );
    if let Some(hash) = &body.target.sha256 {
        text.push_str(&format!(
            ", {} {} sha256 {hash}",
            body.target.kind, body.target.id
        ));
    }
    if let Some(grant) = &body.approved_by_grant {
        // The grant's decision is attributed to the key that granted it.
        let granter = body
            .decisions
            .last()
            .and_then(|d| d.decided_by_owner.as_ref().or(d.decided_by_key.as_ref()));
        text.push_str(&format!("; let through by grant {grant}"));
        if let Some(granter) = granter {
            text.push_str(&format!(", granted by {granter}"));
        }
    }
    if let Some(token) = &body.token {
        text.push_str(&format!(
            "; token {} runs the call with hash {} once, until {}",
            token.token_id, token.tool_call_hash, token.expires_at
        ));
    }
    text + "."
}
