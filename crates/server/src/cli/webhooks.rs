//! `countersign webhooks`: what an operator needs to configure a receiver.

use super::CommandError;
use crate::store::Db;

/// `countersign webhooks`: each webhook's full address, secret and
/// deliveries by state (for the operator who configures the receiver).
pub async fn print(database: &str, out: &mut impl std::io::Write) -> Result<(), CommandError> {
    let db = Db::open_existing(database).await?;
    let hooks = db.webhook_secrets().await?;
    if hooks.is_empty() {
        eprintln!("no webhook has been configured (serve --webhook URL)");
    }
    for (url, secret) in hooks {
        let [pending, sent, failed] = db.delivery_counts(&url).await?;
        writeln!(
            out,
            "{url}\n  secret {secret}\n  deliveries: {sent} sent, {pending} pending, {failed} failed"
        )?;
    }
    Ok(())
}
