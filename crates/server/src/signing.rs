//! The server's Ed25519 signing key and the receipts it signs: created at
//! first start (PKCS#8 PEM, readable by its owner only), loaded after.
//! Receipts are checked offline by `countersign_agent::receipt`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use countersign_domain::toolcall::CanonicalError;
use countersign_domain::wire::{Receipt, ReceiptBody};
use countersign_domain::Review;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use ed25519_dalek::{Signer as _, SigningKey};
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
    /// The key in `path`, which must exist (only `serve` makes one).
    pub fn load(path: &Path) -> Result<Signer, KeyFileError> {
        if !path.exists() {
            return Err(KeyFileError::Io {
                path: path.display().to_string(),
                error: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no signing key here; only `countersign serve` makes one: point --data (COUNTERSIGN_DATA) or --signing-key at the service's",
                ),
            });
        }
        Signer::load_or_create(path)
    }

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
    pub fn sign_json(&self, value: &serde_json::Value) -> Result<String, CanonicalError> {
        let bytes = countersign_domain::toolcall::canonicalize(value)?;
        Ok(STANDARD.encode(self.key.sign(bytes.as_bytes()).to_bytes()))
    }

    /// The signed receipt of a decided review; `None` while pending.
    pub fn receipt(&self, review: &Review) -> Result<Option<Receipt>, CanonicalError> {
        let Some(body) = ReceiptBody::of(review)? else {
            return Ok(None);
        };
        let bytes = body.signed_bytes()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_agent::receipt::{parse_public_key, verify, VerifyError};

    fn decided() -> Review {
        let review = countersign_domain::demo::numbered(1).expect("a demo review");
        let mut review = countersign_domain::demo::approved(&review, chrono::Utc::now())
            .expect("the demo review can be approved");
        let key = countersign_domain::KeyRef::key("key_1");
        review.attribute_last_decision(&key, None, None);
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
