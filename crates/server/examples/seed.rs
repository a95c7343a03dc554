//! Fills a database with numbered reviews, as a team's server holds after
//! months of use, for the desk's benchmarks and browser tests: three in four
//! pending, the rest approved, rejected or cancelled, asked by seven agents.
//! Prints a reviewer key that may sign as `reviewer`.
//!
//! `cargo run --release -p countersign-server --example seed -- --database URL --count N`
//! (then `countersign serve --database URL`).

use countersign_domain::demo::numbered;
use countersign_domain::model::DecisionStatus;
use countersign_domain::{decide, DecisionInput, MplpId, Review};
use countersign_server::store::keys::KeyKind;
use countersign_server::store::Db;

/// Review `n`, decided for one in four (the status follows the number).
fn review(n: usize) -> Result<Review, String> {
    let pending = numbered(n)?;
    let status = match n % 12 {
        3 | 7 => DecisionStatus::Approved,
        11 => DecisionStatus::Rejected,
        5 => DecisionStatus::Cancelled,
        _ => return Ok(pending),
    };
    let input = DecisionInput {
        status,
        decided_by_role: "reviewer".to_owned(),
        reason: Some(format!("Seeded decision {n}")),
        tool_call: None,
    };
    let mut k = 0u128;
    let mut ids = || {
        k += 1;
        MplpId::from_random_bytes(((n as u128) << 32 | k).to_be_bytes())
    };
    let at = pending.confirm.requested_at.to_utc() + chrono::Duration::minutes(5);
    decide(&pending, &input, at, &mut ids).map_err(|e| format!("review {n}: {e}"))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
            .ok_or_else(|| format!("usage: seed --database URL --count N (missing {name})"))
    };
    let url = value("--database")?;
    let count: usize = value("--count")?
        .parse()
        .map_err(|e| format!("--count: {e}"))?;
    let db = Db::open(&url).await.map_err(|e| e.to_string())?;
    let mut added = 0u64;
    for start in (0..count).step_by(10_000) {
        let reviews = (start..count.min(start + 10_000))
            .map(review)
            .collect::<Result<Vec<_>, _>>()?;
        added += db
            .insert_reviews(&reviews, "seed")
            .await
            .map_err(|e| e.to_string())?;
    }
    let key = db
        .add_key(KeyKind::Reviewer, &["reviewer".into()], "seed", None, None)
        .await
        .map_err(|e| e.to_string())?;
    println!("seeded {added} reviews");
    println!("reviewer key: {}", key.secret);
    Ok(())
}
