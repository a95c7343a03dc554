//! The server's Ed25519 signing key and the receipts it signs: created at
//! first start (PKCS#8 PEM, readable by its owner only), loaded after; a
//! receipt is checked offline against a public key the verifier trusts.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use countersign_domain::wire::{Receipt, ReceiptBody, RECEIPT_VERSION};
use countersign_domain::Review;
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey};
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use std::path::Path;
use std::sync::Arc;

/// The key that signs this server's receipts.
#[derive(Clone)]
pub struct Signer {
    key: Arc<SigningKey>,
}

/// Why the signing key could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// The file exists but cannot be read or written.
    #[error("signing key {path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        error: std::io::Error,
    },
    /// The file is not an Ed25519 private key in PKCS#8 PEM.
    #[error("signing key {path} is not an Ed25519 private key in PKCS#8 PEM ({error}); move it away to make a new one, or restore the original")]
    Malformed {
        /// The file.
        path: String,
        /// What the decoder said.
        error: String,
    },
    /// No randomness to make a key with.
    #[error("cannot make a signing key: no randomness ({0})")]
    Random(String),
}

impl Signer {
    /// The key in `path`, made there (with its folder) when missing.
    pub fn load_or_create(path: &Path) -> Result<Signer, KeyFileError> {
        let shown = path.display().to_string();
        let io = |error| KeyFileError::Io {
            path: shown.clone(),
            error,
        };
        let key = match std::fs::read_to_string(path) {
            Ok(pem) => SigningKey::from_pkcs8_pem(&pem).map_err(|e| KeyFileError::Malformed {
                path: shown.clone(),
                error: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut seed = [0u8; 32];
                getrandom::fill(&mut seed).map_err(|e| KeyFileError::Random(e.to_string()))?;
                let key = SigningKey::from_bytes(&seed);
                let pem = key
                    .to_pkcs8_pem(Default::default())
                    .map_err(|e| KeyFileError::Random(e.to_string()))?;
                if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(folder).map_err(io)?;
                }
                write_private(path, pem.as_bytes()).map_err(io)?;
                key
            }
            Err(e) => return Err(io(e)),
        };
        Ok(Signer { key: Arc::new(key) })
    }

    /// The public key, as standard base64 of its 32 bytes.
    pub fn public_key(&self) -> String {
        STANDARD.encode(self.key.verifying_key().as_bytes())
    }

    /// Standard base64 of the signature over a JSON value's canonical form.
    pub fn sign_json(&self, value: &serde_json::Value) -> Result<String, String> {
        let bytes = countersign_domain::toolcall::canonicalize(value).map_err(|e| e.to_string())?;
        Ok(STANDARD.encode(self.key.sign(bytes.as_bytes()).to_bytes()))
    }

    /// The signed receipt of a decided review; `None` while pending.
    pub fn receipt(&self, review: &Review) -> Result<Option<Receipt>, String> {
        let Some(body) = ReceiptBody::of(review).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        let bytes = body.signed_bytes().map_err(|e| e.to_string())?;
        Ok(Some(Receipt {
            signature: STANDARD.encode(self.key.sign(&bytes).to_bytes()),
            public_key: self.public_key(),
            body,
        }))
    }
}

/// Writes a new file only its owner may read (never over an existing one).
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

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
            let by = match (&d.decided_by_owner, &d.decided_by_key) {
                (Some(owner), Some(key)) => format!("{owner} ({key})"),
                (None, Some(key)) => key.clone(),
                (_, None) => "the server".to_owned(),
            };
            format!(
                "{} as {} by {by} at {}",
                d.status, d.decided_by_role, d.decided_at
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

#[cfg(test)]
mod tests {
    use super::*;

    fn decided() -> Review {
        let mut review = countersign_domain::demo::numbered(1).expect("a demo review");
        let input = countersign_domain::DecisionInput {
            status: countersign_domain::model::DecisionStatus::Approved,
            decided_by_role: "reviewer".into(),
            reason: None,
            tool_call: None,
        };
        let mut n = 0u8;
        let mut ids = || {
            n += 1;
            countersign_domain::MplpId::from_random_bytes([n; 16])
        };
        review = countersign_domain::decide(&review, &input, chrono::Utc::now(), &mut ids)
            .expect("the demo review can be approved");
        let key = countersign_domain::KeyRef {
            key_id: "key_1".into(),
            owner: None,
        };
        review.attribute_last_decision(&key, None);
        review
    }

    #[test]
    fn a_receipt_verifies_with_its_key_and_not_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let signer = Signer::load_or_create(&dir.path().join("k.pem")).unwrap();
        let trusted = parse_public_key(&signer.public_key()).unwrap();
        let receipt = signer.receipt(&decided()).unwrap().unwrap();
        assert_eq!(
            receipt.body.decisions[0].decided_by_key.as_deref(),
            Some("key_1")
        );
        assert_eq!(verify(&receipt, &trusted), Ok(()));
        let mut changed = receipt.clone();
        changed.body.rule = "defaulT".into();
        assert_eq!(verify(&changed, &trusted), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_key_is_made_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/k.pem");
        let first = Signer::load_or_create(&path).unwrap();
        let again = Signer::load_or_create(&path).unwrap();
        assert_eq!(first.public_key(), again.public_key());
        std::fs::write(&path, "not a key").unwrap();
        let err = Signer::load_or_create(&path).err().unwrap().to_string();
        assert!(err.contains("not an Ed25519 private key"), "{err}");
    }
}
