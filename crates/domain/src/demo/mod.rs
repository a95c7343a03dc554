//! Demo reviews, seeded by the app on first start and by `countersign serve
//! --demo`, so a new reviewer sees real requests at once: golden flow-05's
//! migration plan, a large credential rotation, a plan with a dependency cycle,
//! one already decided, and tool calls waiting for approval.

mod numbered;

pub use numbered::{approved, numbered, numbered_id};

use crate::model::DecisionStatus;
use crate::toolcall::{new_tool_call_review, ToolCallSubmission};
use crate::wire::ReviewSummary;
use crate::{decide, DecisionInput, MplpId, Review, Timestamp};
use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

/// Golden flow-05's request as the agent submitted it.
const FLOW_05: &str = include_str!("reviews.json");

/// The demo tool-call requests, each with how many minutes ago it was asked.
const TOOL_CALLS: &str = include_str!("tool_calls.json");

/// A demo id: a fixed UUID v4 per number, so demo reviews keep their URLs.
fn demo_id(n: u32) -> String {
    format!("c0ffee00-0000-4000-8000-{n:012x}")
}

fn meta() -> Value {
    json!({"protocol_version": "1.0.0", "schema_version": "1.0.0"})
}

fn at(now: DateTime<Utc>, minutes_ago: i64) -> String {
    Timestamp::from_utc(now - Duration::minutes(minutes_ago)).to_string()
}

fn step(n: u32, description: &str, role: &str, status: &str, deps: &[u32]) -> Value {
    json!({
        "step_id": demo_id(n),
        "description": description,
        "status": status,
        "agent_role": role,
        "dependencies": deps.iter().map(|&d| demo_id(d)).collect::<Vec<_>>(),
    })
}

/// A pending plan request of the demo.
struct Request<'a> {
    confirm: u32,
    plan: u32,
    requested_by: &'a str,
    minutes_ago: i64,
    reason: &'a str,
    title: &'a str,
    objective: &'a str,
    steps: Vec<Value>,
}

impl Request<'_> {
    fn to_json(&self, now: DateTime<Utc>) -> Value {
        json!({
            "confirm": {
                "meta": meta(),
                "confirm_id": demo_id(self.confirm),
                "target_type": "plan",
                "target_id": demo_id(self.plan),
                "status": "pending",
                "requested_by_role": self.requested_by,
                "requested_at": at(now, self.minutes_ago),
                "reason": self.reason,
            },
            "target": {"plan": {
                "meta": meta(),
                "plan_id": demo_id(self.plan),
                "context_id": demo_id(9),
                "title": self.title,
                "objective": self.objective,
                "status": "proposed",
                "steps": self.steps,
            }}
        })
    }
}

/// 130 steps: inventory, then per service a rotate → deploy → verify chain,
/// grouped by region with a regional canary gate, then a final audit.
fn rotation_steps() -> Vec<Value> {
    let regions = ["eu-west", "us-east", "ap-south"];
    let services = [
        "billing", "auth", "search", "ledger", "mailer", "reports", "gateway", "payouts",
        "catalog", "orders",
    ];
    let mut steps = vec![step(
        1000,
        "Inventory every credential older than 90 days",
        "secops-agent",
        "completed",
        &[],
    )];
    let mut n = 1001;
    let mut region_gates = Vec::new();
    for region in regions {
        let canary = n;
        steps.push(step(
            canary,
            &format!("Open a canary window in {region}"),
            "ops-agent",
            "pending",
            &[1000],
        ));
        n += 1;
        let mut verified = Vec::new();
        for service in services {
            let rotate = n;
            steps.push(step(
                rotate,
                &format!("Rotate {service} database password in {region}"),
                "secops-agent",
                "pending",
                &[canary],
            ));
            steps.push(step(
                rotate + 1,
                &format!("Deploy {service} with the new secret in {region}"),
                "deploy-agent",
                "pending",
                &[rotate],
            ));
            steps.push(step(
                rotate + 2,
                &format!("Verify {service} health checks in {region}"),
                "ops-agent",
                "pending",
                &[rotate + 1],
            ));
            verified.push(rotate + 2);
            n += 3;
        }
        steps.push(step(
            n,
            &format!("Revoke old {region} credentials"),
            "secops-agent",
            "pending",
            &verified,
        ));
        region_gates.push(n);
        n += 1;
    }
    steps.push(step(
        n,
        "Publish the rotation audit report",
        "secops-agent",
        "pending",
        &region_gates,
    ));
    steps
}

/// Every demo review, with request times relative to `now`.
pub fn reviews(now: DateTime<Utc>) -> Result<Vec<Review>, String> {
    let damaged = |e: serde_json::Error| format!("the demo reviews are damaged: {e}");
    let mut reviews: Vec<Review> = serde_json::from_str(FLOW_05).map_err(damaged)?;
    let requests = [
        Request {
            confirm: 1,
            plan: 2,
            requested_by: "secops-agent",
            minutes_ago: 25,
            reason: "Credential rotation touches every production database; needs a security officer.",
            title: "Rotate production database credentials",
            objective: "Rotate every production database password older than 90 days, region by region, without downtime.",
            steps: rotation_steps(),
        },
        Request {
            confirm: 3,
            plan: 4,
            requested_by: "release-agent",
            minutes_ago: 190,
            reason: "Release train for billing v2",
            title: "Ship billing v2 to production",
            objective: "Roll out billing v2 behind a feature flag and migrate invoices.",
            steps: vec![
                step(40, "Build billing v2 release artifacts", "release-agent", "completed", &[]),
                step(41, "Migrate invoice tables", "db-agent", "pending", &[40, 43]),
                step(42, "Enable the billing-v2 feature flag", "release-agent", "pending", &[41]),
                step(43, "Backfill invoice totals under the new flag", "db-agent", "pending", &[42]),
                step(44, "Announce the release", "comms-agent", "pending", &[42]),
            ],
        },
        Request {
            confirm: 5,
            plan: 6,
            requested_by: "compliance-agent",
            minutes_ago: 60 * 26,
            reason: "Turning on audit logging changes log retention costs.",
            title: "Enable audit logging on the admin console",
            objective: "Record every admin action with who, what and when, kept for one year.",
            steps: vec![
                step(60, "Add the audit log table", "db-agent", "completed", &[]),
                step(61, "Write admin actions to the audit log", "coder-agent", "pending", &[60]),
                step(62, "Set one-year retention", "ops-agent", "pending", &[60]),
                step(63, "Verify entries for a sample of actions", "qa-agent", "pending", &[61, 62]),
            ],
        },
    ];
    for request in &requests {
        reviews.push(crate::json::typed(&request.to_json(now)).map_err(damaged)?);
    }
    // Stored as a server stores what is asked: with the target's hash.
    for review in &mut reviews {
        review
            .fix_target_hash()
            .map_err(|e| format!("the demo plans have no canonical form: {e}"))?;
    }
    // The audit plan was approved yesterday.
    let mut ids = sequential_ids(0x1000);
    let decided_at = now - Duration::minutes(60 * 24);
    let approval = DecisionInput {
        status: DecisionStatus::Approved,
        decided_by_role: "security_officer".into(),
        reason: Some("Retention cost reviewed with finance; go ahead.".into()),
        tool_call: None,
    };
    let last = reviews.len() - 1;
    reviews[last] = decide(&reviews[last], &approval, decided_at, &mut ids)
        .map_err(|e| format!("the demo approval failed: {e}"))?;
    reviews.extend(tool_calls(now)?);
    Ok(reviews)
}

/// Tool calls waiting for approval: a wire transfer (R4, with a dry run), a
/// deletion whose summary hides a path (R3), and two similar emails in one
/// session (R2), which the inbox groups. They expire two hours after seeding.
fn tool_calls(now: DateTime<Utc>) -> Result<Vec<Review>, String> {
    let expires = Timestamp::from_utc(now + Duration::hours(2)).to_string();
    let requests: Vec<Value> = serde_json::from_str(TOOL_CALLS)
        .map_err(|e| format!("the demo tool calls are damaged: {e}"))?;
    let mut ids = sequential_ids(0x2000);
    requests
        .into_iter()
        .map(|item| {
            let minutes_ago = item["minutesAgo"].as_i64().unwrap_or(0);
            let mut body = item["request"].clone();
            body["expiresAt"] = json!(expires);
            let submission = crate::json::typed::<ToolCallSubmission>(&body)
                .map_err(|e| format!("the demo tool calls are damaged: {e}"))?;
            new_tool_call_review(submission, now - Duration::minutes(minutes_ago), &mut ids)
                .map_err(|issues| format!("the demo tool calls are invalid: {issues:?}"))
        })
        .collect()
}

/// Deterministic ids for the demo's own decisions, so reseeding gives the same URLs.
fn sequential_ids(start: u32) -> impl FnMut() -> MplpId {
    let mut n = u128::from(start);
    move || {
        n += 1;
        MplpId::from_random_bytes((0xc0ffee00_u128 << 96 | n).to_be_bytes())
    }
}

/// When the stored demo summaries were taken (see [`summaries`]).
const SUMMARIES_TAKEN_AT: &str = "2026-01-01T00:00:00Z";

/// The demo's inbox rows as [`reviews`] at [`SUMMARIES_TAKEN_AT`] gives them.
const SUMMARIES: &str = include_str!("summaries.json");

/// The demo requests that keep their own time (from the MPLP fixtures); the
/// others were asked a while before now.
const FIXED_TIMES: [&str; 1] = ["550e8400-e29b-41d4-a716-446655440520"];

/// The inbox rows of `reviews(now)`, without building the reviews: a
/// browser's first visit draws them before the demo's own code arrives.
pub fn summaries(now: DateTime<Utc>) -> Result<Vec<ReviewSummary>, String> {
    let mut summaries: Vec<ReviewSummary> = serde_json::from_str(SUMMARIES)
        .map_err(|e| format!("the demo summaries are damaged: {e}"))?;
    let taken = Timestamp::parse(SUMMARIES_TAKEN_AT)
        .map_err(|e| format!("the demo summaries' time is damaged: {e}"))?
        .to_utc();
    for summary in &mut summaries {
        if !FIXED_TIMES.contains(&summary.id.to_string().as_str()) {
            summary.at = Timestamp::from_utc(summary.at.to_utc() + (now - taken));
        }
        if let Some(expires) = &mut summary.expires {
            *expires = Timestamp::from_utc(expires.to_utc() + (now - taken));
        }
    }
    Ok(summaries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of_reviews(now: DateTime<Utc>) -> Vec<ReviewSummary> {
        reviews(now)
            .unwrap()
            .iter()
            .map(ReviewSummary::of)
            .collect()
    }

    #[test]
    fn the_stored_summaries_are_those_of_the_reviews_at_any_time() {
        let taken = Timestamp::parse(SUMMARIES_TAKEN_AT).unwrap().to_utc();
        let expected = of_reviews(taken);
        assert_eq!(
            summaries(taken).unwrap(),
            expected,
            "src/demo/summaries.json is out of date with the demo reviews; it should be:\n{}",
            serde_json::to_string(&expected).unwrap()
        );
        let later = taken + Duration::days(300) + Duration::seconds(17);
        assert_eq!(summaries(later).unwrap(), of_reviews(later));
    }
}
