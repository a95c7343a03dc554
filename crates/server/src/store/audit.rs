//! The tamper-evident audit chain: every change to a review, a grant, a key
//! (minted, revoked, a device paired) or a webhook appends an entry in the
//! change's own transaction (writes are one at a
//! time, see [`super::begin_write`], so positions have no gaps and each
//! entry knows the one before). An entry's hash covers the previous hash,
//! its position and its canonical body; [`Db::verify_audit`] walks the chain
//! and names the first entry that does not follow, and checks that every
//! stored review, grant, key and webhook is the one its last entry covers.

use super::{placeholders, AnyQuery, Db, DbError, Marks, Value};
use countersign_domain::toolcall::{canonicalize, CallHash};
use serde_json::json;
use sqlx::Row;
use std::collections::HashMap;

/// The hash before the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Entries read per query while verifying or exporting.
const PAGE: i64 = 2_000;

/// One change as the chain records it.
pub(crate) struct Entry {
    /// `review.created`, `review.decided`…, `grant.made`.
    pub kind: &'static str,
    /// The review's or grant's id.
    pub subject: String,
    /// What the subject is: `review` or `grant`.
    pub subject_type: &'static str,
    /// The SHA-256 of the stored document after the change, exactly as
    /// stored (hashed where the entry is made: for a review's change, before
    /// it reaches the writer).
    pub doc_sha256: CallHash,
    /// When.
    pub at: String,
}

impl Entry {
    fn body(&self) -> Result<String, sqlx::Error> {
        let body = json!({
            "kind": self.kind,
            "subject": self.subject,
            "subject_type": self.subject_type,
            "doc_sha256": self.doc_sha256.as_str(),
            "at": self.at,
        });
        canonicalize(&body).map_err(|e| sqlx::Error::Protocol(e.to_string()))
    }
}

/// The link from `prev` to an entry at `seq` with `body`.
pub fn link(prev: &str, seq: i64, body: &str) -> String {
    CallHash::of_canonical(&format!("{prev}\n{seq}\n{body}"))
        .as_str()
        .to_owned()
}

/// The chain's head: the last entry's position and hash.
pub(crate) const HEAD: &str = "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1";

/// The position and hash that [`HEAD`] read (position 0 and [`GENESIS`]
/// when the chain is empty).
pub(crate) fn head_of(row: Option<&sqlx::any::AnyRow>) -> Result<(i64, String), sqlx::Error> {
    match row {
        Some(row) => Ok((row.try_get("seq")?, row.try_get("hash")?)),
        None => Ok((0, GENESIS.to_owned())),
    }
}

/// An entry placed in the chain: its position, canonical body and hash.
pub(crate) struct Linked {
    seq: i64,
    body: String,
    hash: String,
}

/// `entries` placed after the chain's `head`, each linked to the one before.
pub(crate) fn chain(head: (i64, String), entries: &[Entry]) -> Result<Vec<Linked>, sqlx::Error> {
    let (mut seq, mut prev) = head;
    entries
        .iter()
        .map(|entry| {
            seq += 1;
            let body = entry.body()?;
            prev = link(&prev, seq, &body);
            Ok(Linked {
                seq,
                body,
                hash: prev.clone(),
            })
        })
        .collect()
}

/// The statements that store `linked`, each with its entries to bind with
/// [`bind`]: at most 1,000 rows a statement (both databases cap the values
/// one statement may bind).
pub(crate) fn inserts(marks: Marks, linked: &[Linked]) -> Vec<(String, &[Linked])> {
    linked
        .chunks(1_000)
        .map(|chunk| (insert_sql(marks, chunk.len()), chunk))
        .collect()
}

/// One insert of `rows` entries.
pub(crate) fn insert_sql(marks: Marks, rows: usize) -> String {
    format!(
        "INSERT INTO audit_log (seq, body, hash) VALUES {}",
        placeholders(marks, rows, 3)
    )
}

impl Linked {
    /// Its values, in the order of an [`inserts`] statement's row.
    pub(crate) fn values(&self) -> [Value<'_>; 3] {
        [
            Value::Int(self.seq),
            Value::Text(&self.body),
            Value::Text(&self.hash),
        ]
    }
}

/// Binds the values of `linked`, in the order of [`inserts`]' statement.
pub(crate) fn bind<'q>(query: AnyQuery<'q>, linked: &'q [Linked]) -> AnyQuery<'q> {
    linked
        .iter()
        .flat_map(Linked::values)
        .fold(query, |query, value| value.bind(query))
}

/// Appends entries after the chain's head, inside a write transaction.
pub(crate) async fn append(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    entries: &[Entry],
) -> Result<(), sqlx::Error> {
    if entries.is_empty() {
        return Ok(());
    }
    let head = sqlx::query(HEAD).fetch_optional(&mut **tx).await?;
    let linked = chain(head_of(head.as_ref())?, entries)?;
    for (sql, rows) in inserts(Marks::Numbered, &linked) {
        bind(sqlx::query(&sql), rows).execute(&mut **tx).await?;
    }
    Ok(())
}

/// What walking the chain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every entry follows from the one before, and every stored review and
    /// grant is the document its last entry covers.
    Intact {
        /// How many entries.
        entries: i64,
        /// The head's hash.
        head: String,
    },
    /// The first thing that does not match.
    Broken {
        /// The first entry that does not follow (0 when the entries are
        /// whole and a stored document differs from its entry).
        seq: i64,
        /// What is wrong, for a person.
        why: String,
    },
}

/// One stored entry.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow)]
pub struct Stored {
    /// Its position (1, 2, 3…).
    pub seq: i64,
    /// Its canonical body.
    pub body: String,
    /// Its hash.
    pub hash: String,
}

/// Whether the review, grant, key, webhook or session `id` is stored.
async fn audited_document_exists(
    conn: &mut sqlx::AnyConnection,
    subject_type: &str,
    id: &str,
) -> Result<bool, sqlx::Error> {
    let sql = match subject_type {
        "review" => "SELECT COUNT(*) FROM reviews WHERE id = $1",
        "grant" => "SELECT COUNT(*) FROM scope_grants WHERE grant_id = $1",
        "key" => "SELECT COUNT(*) FROM api_keys WHERE id = $1",
        "webhook" => "SELECT COUNT(*) FROM webhooks WHERE url = $1",
        "session" => "SELECT COUNT(*) FROM sessions WHERE id = $1",
        // Only these five are recorded; an entry naming another is the
        // chain's business, checked by its hashes.
        _ => return Ok(true),
    };
    let found: i64 = sqlx::query_scalar(sql).bind(id).fetch_one(conn).await?;
    Ok(found > 0)
}

/// The stored reviews or grants after id `after` (all when `limit` is 0),
/// by id, each as the text its audit entries cover.
async fn audited_documents(
    conn: &mut sqlx::AnyConnection,
    subject_type: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<(String, String)>, sqlx::Error> {
    let page = if limit > 0 {
        format!("LIMIT {limit}")
    } else {
        String::new()
    };
    if subject_type == "key" {
        let sql = format!(
            "SELECT {} FROM api_keys WHERE id > $1 ORDER BY id {page}",
            super::keys::KEY_COLUMNS
        );
        let rows = sqlx::query(&sql).bind(after).fetch_all(&mut *conn).await?;
        return rows
            .iter()
            .map(|row| {
                let key =
                    super::keys::key_of(row).map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
                Ok((key.id.clone(), super::keys::audited_key(&key)))
            })
            .collect();
    }
    if subject_type == "session" {
        let sql = format!(
            "{} WHERE s.id > $1 ORDER BY s.id {page}",
            super::sessions::SELECT_SESSIONS
        );
        let rows = sqlx::query(&sql).bind(after).fetch_all(&mut *conn).await?;
        return rows
            .iter()
            .map(|row| {
                let session = super::sessions::session_of(row)
                    .map_err(|e| sqlx::Error::Protocol(e.to_string()))?;
                Ok((
                    session.id.clone(),
                    super::sessions::audited_session(&session),
                ))
            })
            .collect();
    }
    if subject_type == "webhook" {
        let sql =
            format!("SELECT url, created_at FROM webhooks WHERE url > $1 ORDER BY url {page}");
        let rows = sqlx::query(&sql).bind(after).fetch_all(&mut *conn).await?;
        return rows
            .iter()
            .map(|row| {
                let url: String = row.try_get("url")?;
                let at: String = row.try_get("created_at")?;
                Ok((url.clone(), super::webhooks::audited_webhook(&url, &at)))
            })
            .collect();
    }
    let grants = subject_type == "grant";
    let sql = if grants {
        format!("SELECT grant_id AS id, doc, revoked_at, revoked_by FROM scope_grants WHERE grant_id > $1 ORDER BY grant_id {page}")
    } else {
        format!("SELECT id, doc FROM reviews WHERE id > $1 ORDER BY id {page}")
    };
    let rows = sqlx::query(&sql).bind(after).fetch_all(&mut *conn).await?;
    rows.iter()
        .map(|row| {
            let doc: String = row.try_get("doc")?;
            let doc = if grants {
                let revoked_at: Option<String> = row.try_get("revoked_at")?;
                let revoked_by: Option<String> = row.try_get("revoked_by")?;
                super::grants::audited(&doc, revoked_at.as_deref(), revoked_by.as_deref())
            } else {
                doc
            };
            Ok((row.try_get("id")?, doc))
        })
        .collect()
}

impl Db {
    /// Starts the chain of a database that had reviews or grants before it
    /// had one: each is recorded as it stands (`review.adopted`,
    /// `grant.adopted`), once. Nothing to do on a chain already started.
    pub(crate) async fn adopt_unaudited(&self) -> Result<(), DbError> {
        let now = super::stored_time(chrono::Utc::now());
        // Under the write lock: instances starting together adopt once.
        let mut tx = super::begin_write(self.pool(), self.backend()).await?;
        let started = sqlx::query("SELECT seq FROM audit_log LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        let mut entries = Vec::new();
        let mut adopt =
            |kind: &'static str, subject_type: &'static str, found: Vec<(String, String)>| {
                for (subject, doc) in found {
                    entries.push(Entry {
                        kind,
                        subject,
                        subject_type,
                        doc_sha256: CallHash::of_canonical(&doc),
                        at: now.clone(),
                    });
                }
            };
        if started.is_none() {
            for (kind, subject_type) in [("review.adopted", "review"), ("grant.adopted", "grant")] {
                adopt(
                    kind,
                    subject_type,
                    audited_documents(&mut tx, subject_type, "", 0).await?,
                );
            }
        }
        // Keys and webhooks were recorded from a later version on: a chain
        // adopts those it finds once, when it first meets them.
        for (kind, subject_type) in [("key.adopted", "key"), ("webhook.adopted", "webhook")] {
            let adopted = sqlx::query("SELECT at FROM audit_adopted WHERE subject_type = $1")
                .bind(subject_type)
                .fetch_optional(&mut *tx)
                .await?;
            if adopted.is_none() {
                adopt(
                    kind,
                    subject_type,
                    audited_documents(&mut tx, subject_type, "", 0).await?,
                );
                sqlx::query("INSERT INTO audit_adopted (subject_type, at) VALUES ($1, $2)")
                    .bind(subject_type)
                    .bind(&now)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        append(&mut tx, &entries).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The entries after position `after`, at most [`PAGE`] of them, in order.
    pub async fn audit_entries(&self, after: i64) -> Result<Vec<Stored>, DbError> {
        Ok(sqlx::query_as(
            "SELECT seq, body, hash FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(after)
        .bind(PAGE)
        .fetch_all(self.pool())
        .await?)
    }

    /// Walks the whole chain (O(entries), in pages), then compares every
    /// stored review and grant with the document its last entry covers.
    pub async fn verify_audit(&self) -> Result<Verdict, DbError> {
        let (mut expected_seq, mut prev) = (1i64, GENESIS.to_owned());
        let mut last_doc: HashMap<(String, String), (i64, String)> = HashMap::new();
        loop {
            let page = self.audit_entries(expected_seq - 1).await?;
            let Some(last) = page.last().map(|e| e.seq) else {
                break;
            };
            for entry in page {
                if entry.seq != expected_seq {
                    return Ok(Verdict::Broken {
                        seq: expected_seq,
                        why: format!(
                            "entry {expected_seq} is missing (the next one stored is {})",
                            entry.seq
                        ),
                    });
                }
                if link(&prev, entry.seq, &entry.body) != entry.hash {
                    return Ok(Verdict::Broken {
                        seq: entry.seq,
                        why: format!(
                            "entry {} does not follow from entry {}: its body or hash was changed, or entries were moved",
                            entry.seq,
                            entry.seq - 1
                        ),
                    });
                }
                let body: serde_json::Value = serde_json::from_str(&entry.body)
                    .map_err(|e| DbError::Damaged(format!("audit entry {}: {e}", entry.seq)))?;
                let text = |key: &str| body[key].as_str().unwrap_or_default().to_owned();
                last_doc.insert(
                    (text("subject_type"), text("subject")),
                    (entry.seq, text("doc_sha256")),
                );
                prev = entry.hash;
                expected_seq += 1;
            }
            if last < expected_seq - 1 {
                break;
            }
        }
        if let Some(why) = self.stored_documents_differ(&last_doc).await? {
            return Ok(Verdict::Broken { seq: 0, why });
        }
        Ok(Verdict::Intact {
            entries: expected_seq - 1,
            head: prev,
        })
    }

    /// The first stored review, grant, key or webhook that is not the
    /// document its last audit entry covers (or that has no entry at all),
    /// else the first one the chain records that is no longer stored:
    /// Countersign deletes none of them.
    async fn stored_documents_differ(
        &self,
        last_doc: &HashMap<(String, String), (i64, String)>,
    ) -> Result<Option<String>, DbError> {
        let mut stored = 0usize;
        for kind in ["review", "grant", "key", "webhook", "session"] {
            let mut after = String::new();
            loop {
                let mut conn = self.pool().acquire().await?;
                let rows = audited_documents(&mut conn, kind, &after, PAGE).await?;
                let Some((last, _)) = rows.last() else { break };
                after = last.clone();
                for (id, doc) in rows {
                    stored += 1;
                    let hash = CallHash::of_canonical(&doc);
                    match last_doc.get(&(kind.to_owned(), id.clone())) {
                        None => {
                            return Ok(Some(format!(
                                "{kind} {id} is stored but no audit entry records it"
                            )))
                        }
                        Some((seq, covered)) if covered != hash.as_str() => {
                            return Ok(Some(format!(
                                "{kind} {id} as stored is not the document its last audit entry ({seq}) covers: it was changed outside Countersign"
                            )))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        // Every stored document has an entry: fewer stored than recorded
        // means some were deleted, found by looking each one up.
        if stored < last_doc.len() {
            let mut recorded: Vec<_> = last_doc.iter().collect();
            recorded.sort_by_key(|(_, (seq, _))| *seq);
            for ((kind, id), (seq, _)) in recorded {
                let mut conn = self.pool().acquire().await?;
                if !audited_document_exists(&mut conn, kind, id).await? {
                    return Ok(Some(format!(
                        "{kind} {id}, recorded by audit entry {seq}, is no longer stored: it was deleted outside Countersign"
                    )));
                }
            }
        }
        Ok(None)
    }
}
