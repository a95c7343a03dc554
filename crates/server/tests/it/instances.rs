//! Several `countersign serve` instances on one PostgreSQL database (needs
//! COUNTERSIGN_TEST_POSTGRES): every kind of change made through all of them
//! at once reaches a live subscriber on each instance exactly once, in feed
//! order, and no request is answered with a server error.

use crate::support::{confirm_id, fresh_database, review, subscribe, Client, Server};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

const INSTANCES: usize = 3;
/// Workers per instance; each runs whole review lifecycles one after another.
const WORKERS: u32 = 3;
const ROUNDS: u32 = 25;

/// Every change after `after`, as `GET /changes` lists them, up to the sentinel's creation.
fn feed(reviewer: &Client, mut after: i64, sentinel: &str) -> Vec<i64> {
    let mut positions = Vec::new();
    loop {
        let page = reviewer.get(&format!("/changes?after={after}&limit=500"));
        assert_eq!(page.status, 200, "{}", page.text);
        for change in page.body["changes"].as_array().unwrap() {
            positions.push(change["seq"].as_i64().unwrap());
            if change["summary"]["id"] == sentinel {
                return positions;
            }
        }
        after = page.body["position"].as_i64().unwrap();
        assert!(page.body["more"] == true, "the sentinel is not in the feed");
    }
}

/// One worker's lifecycles: a plan rejected, resubmitted and approved, and a
/// tool call approved and redeemed, each step through another instance.
fn work(
    servers: &[Server],
    (agent_key, reviewer_key): (&str, &str),
    worker: u32,
) -> Result<u32, String> {
    let on = |i: usize, key: &str| servers[i % servers.len()].client(key);
    let expect = |what: &str, reply: crate::support::Reply, status: u16| -> Result<Value, String> {
        if reply.status == status {
            Ok(reply.body)
        } else {
            Err(format!("{what}: {} {}", reply.status, reply.text))
        }
    };
    let mut changes = 0;
    for round in 0..ROUNDS {
        let n = worker * 1000 + round + 1;
        let i = (worker + round) as usize;
        let id = confirm_id(n);
        expect(
            "submit",
            on(i, agent_key).post("/reviews", &review(n, 3, false)),
            201,
        )?;
        let reject =
            json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Too wide"});
        expect(
            "reject",
            on(i + 1, reviewer_key).decide(&id, &format!("rej-{n}"), &reject),
            200,
        )?;
        let resubmit = json!({"by_role": "deploy-agent", "reason": "Narrowed"});
        expect(
            "resubmit",
            on(i + 2, agent_key).post(&format!("/reviews/{id}/resubmit"), &resubmit),
            200,
        )?;
        let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
        expect(
            "approve",
            on(i, reviewer_key).decide(&id, &format!("app-{n}"), &approve),
            200,
        )?;

        let args = json!({"amount": n, "to": "ACME GmbH"});
        let asked = expect(
            "ask",
            on(i + 1, agent_key).post("/tool-calls", &crate::support::tool_call(args.clone())),
            201,
        )?;
        let call = asked["outcome"]["confirm_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let decided = expect(
            "approve call",
            on(i + 2, reviewer_key).decide(&call, &format!("call-{n}"), &approve),
            200,
        )?;
        let redeem = json!({
            "tokenId": decided["outcome"]["token"]["tokenId"],
            "toolCall": {"name": "wire_transfer", "args": args},
        });
        expect(
            "redeem",
            on(i, agent_key).post(&format!("/reviews/{call}/redeem"), &redeem),
            200,
        )?;
        changes += 7;
    }
    Ok(changes)
}

#[test]
fn three_instances_deliver_every_change_to_every_subscriber_once_in_order() {
    let Some(url) = fresh_database("countersign_instances") else {
        return;
    };
    let data: Vec<_> = (0..INSTANCES)
        .map(|_| tempfile::tempdir().unwrap())
        .collect();
    let servers: Vec<Server> = data
        .iter()
        .map(|d| Server::start_on(d.path(), Some(&url), &[]))
        .collect();
    let reviewer_key = servers[0].new_key("reviewer");
    let agent_key = servers[0].new_key("agent");
    let reviewer = servers[0].client(&reviewer_key);
    let start = feed_position(&reviewer);
    let sentinel = confirm_id(u32::MAX);
    let ready = AtomicU32::new(0);

    let (received, made) = std::thread::scope(|scope| {
        let subscribers: Vec<_> = servers
            .iter()
            .map(|s| {
                scope.spawn(|| {
                    subscribe(
                        &s.url,
                        &reviewer_key,
                        &sentinel,
                        &ready,
                        Duration::from_secs(180),
                    )
                })
            })
            .collect();
        while ready.load(Ordering::SeqCst) < INSTANCES as u32 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let workers: Vec<_> = (0..INSTANCES as u32 * WORKERS)
            .map(|w| {
                let (servers, keys) = (&servers, (agent_key.as_str(), reviewer_key.as_str()));
                scope.spawn(move || work(servers, keys, w))
            })
            .collect();
        let made: Vec<Result<u32, String>> =
            workers.into_iter().map(|w| w.join().unwrap()).collect();
        let last = servers[2]
            .client(&servers[2].agent)
            .post("/reviews", &review(u32::MAX, 1, false));
        assert_eq!(last.status, 201, "{}", last.text);
        let received: Vec<Result<Vec<i64>, String>> =
            subscribers.into_iter().map(|s| s.join().unwrap()).collect();
        (received, made)
    });
    let made: u32 = made
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("a request failed: {e}"))
        .into_iter()
        .sum();
    let stored = feed(&reviewer, start, &sentinel);
    assert_eq!(stored.len() as u32, made + 1, "changes stored in the feed");
    for (instance, seen) in received.into_iter().enumerate() {
        let seen = seen.unwrap_or_else(|e| panic!("subscriber on instance {instance}: {e}"));
        let missed = stored.iter().filter(|p| !seen.contains(p)).count();
        println!(
            "instance {instance}: {} events received of {}, {missed} missed",
            seen.len(),
            stored.len()
        );
        assert_eq!(
            seen, stored,
            "the subscriber on instance {instance} received every change once, in order"
        );
    }
}

/// The newest feed position, by paging `GET /changes` from the start.
fn feed_position(reviewer: &Client) -> i64 {
    let mut after = 0;
    loop {
        let page = reviewer.get(&format!("/changes?after={after}&limit=500"));
        assert_eq!(page.status, 200, "{}", page.text);
        after = page.body["position"].as_i64().unwrap();
        if page.body["more"] != true {
            return after;
        }
    }
}
