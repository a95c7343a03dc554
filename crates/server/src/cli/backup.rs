//! `countersign backup FILE`: a consistent copy of a SQLite database, taken
//! while the server runs (SQLite's `VACUUM INTO`: one read transaction, so
//! the copy is the database as of one commit), with the signing key copied
//! beside it, since without that key no receipt the server signed can be
//! checked against a restored server. PostgreSQL is backed up with its own
//! tools (`pg_dump`), which this command names.

use super::CommandError;
use crate::store::{Backend, Db};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a backup's signing key goes: beside the copy, `FILE.signing-key.pem`.
pub fn key_copy_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".signing-key.pem");
    PathBuf::from(name)
}

/// Writes the copy to `file` (which must not exist yet) and the signing key
/// at `signing_key` beside it, then says what was written.
pub async fn run(
    database: &str,
    signing_key: &Path,
    file: &Path,
    out: &mut impl Write,
) -> Result<(), CommandError> {
    if file.exists() {
        return Err(CommandError::Refused(format!(
            "{} exists already: a backup never overwrites a file; name a new one",
            file.display()
        )));
    }
    let key_copy = key_copy_of(file);
    if key_copy.exists() {
        return Err(CommandError::Refused(format!(
            "{} exists already: a backup never overwrites a file; name a new one",
            key_copy.display()
        )));
    }
    let db = Db::open_existing(database).await?;
    if db.backend() == Backend::Postgres {
        return Err(CommandError::Refused("this database is PostgreSQL: back it up with its own tools, e.g. `pg_dump --format=custom --file=countersign.dump \"$DATABASE_URL\"`, and keep the signing key (--signing-key, COUNTERSIGN_SIGNING_KEY) with it (docs/operating.md)".to_owned()));
    }
    let text = file
        .to_str()
        .ok_or_else(|| CommandError::Refused(format!("{} is not a UTF-8 path", file.display())))?;
    db.copy_into(text).await?;
    let key = std::fs::read(signing_key).map_err(|e| {
        CommandError::Incomplete(format!(
            "the database was copied to {}, but the signing key {} could not be read ({e}): copy it yourself, no receipt can be checked without it",
            file.display(),
            signing_key.display()
        ))
    })?;
    crate::signing::write_private(&key_copy, &key).map_err(|e| {
        CommandError::Incomplete(format!(
            "the database was copied to {}, but the signing key could not be written to {} ({e}): copy {} yourself",
            file.display(),
            key_copy.display(),
            signing_key.display()
        ))
    })?;
    writeln!(
        out,
        "backed up the database to {}\nand its signing key to {}\nKeep both, and keep the key secret: whoever holds it can sign receipts.",
        file.display(),
        key_copy.display()
    )?;
    Ok(())
}
