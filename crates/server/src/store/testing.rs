//! Helpers for the store's own tests: a scratch SQLite database and the plan
//! SQLite makes of a statement.

use super::Db;
use sqlx::Row;

/// A fresh SQLite database, migrated, in a folder of its own (removed when
/// the returned folder is dropped).
pub async fn scratch() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&format!("sqlite://{}/scratch.db", dir.path().display()))
        .await
        .unwrap();
    (dir, db)
}

/// SQLite's plan of `sql` with its numbered values `binds`: one line a step.
pub async fn plan(db: &Db, sql: &str, binds: &[String]) -> Vec<String> {
    let explain = format!("EXPLAIN QUERY PLAN {sql}");
    binds
        .iter()
        .fold(sqlx::query(&explain), |query, value| query.bind(value))
        .fetch_all(db.pool())
        .await
        .unwrap()
        .iter()
        .map(|row| row.try_get::<String, _>("detail").unwrap())
        .collect()
}
