//! The live event stream through the real server process: what it announces,
//! resuming after a position, and how it is opened (a single-use ticket;
//! never a key in the URL).

use crate::support::{confirm_id, open_events, read_events, review, Opener, Server};
use serde_json::json;

#[test]
fn live_events_announce_created_decided_and_resumed_changes() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let events = read_events(&server, Opener::Key(&server.reviewer), "", 2, || {
        assert_eq!(agent.post("/reviews", &review(7, 2, false)).status, 201);
        let decided = reviewer.decide(
            &confirm_id(7),
            "e-1",
            &json!({"status": "cancelled", "decided_by_role": "reviewer", "reason": "Superseded"}),
        );
        assert_eq!(decided.status, 200);
    });
    assert_eq!(events[0].1, "review.created");
    assert_eq!(
        events[0].2["review"]["confirm"]["confirm_id"],
        confirm_id(7)
    );
    assert_eq!(events[1].1, "review.decided");
    assert_eq!(events[1].2["status"], "cancelled");
    assert_eq!(events[1].2["summary"]["status"], "cancelled");
    // Resuming after the first event replays the second.
    let resumed = read_events(
        &server,
        Opener::Key(&server.reviewer),
        &format!("?after={}", events[0].0),
        1,
        || {},
    );
    assert_eq!(resumed[0].0, events[1].0);
}

#[test]
fn a_ticket_opens_the_event_stream_once_and_a_key_in_the_url_opens_nothing() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::start(data.path(), &[]);
    let reviewer = server.client(&server.reviewer);
    let minted = reviewer.post("/events/tickets", &json!({}));
    assert_eq!(minted.status, 201, "{}", minted.text);
    let ticket = minted.body["ticket"].as_str().unwrap().to_owned();
    assert!(
        !ticket.contains(&server.reviewer),
        "the ticket is not the key"
    );
    // It opens a stream (resuming from a position like a key does)...
    let events = read_events(&server, Opener::Ticket(&ticket), "?after=0", 1, || {});
    assert_eq!(events.len(), 1);
    // ...once: spent, it opens nothing, and neither does a made-up one.
    let (again, _) = open_events(&server, Opener::Ticket(&ticket), "");
    assert_eq!(again, 401);
    let (made_up, _) = open_events(&server, Opener::Ticket("cs_ticket_0000"), "");
    assert_eq!(made_up, 401);
    // The key itself is never taken from the URL.
    let in_url = server
        .client("")
        .get(&format!("/events?access_token={}", server.reviewer));
    assert_eq!(in_url.status, 401, "{}", in_url.text);
    // Another endpoint does not take a ticket.
    let second = reviewer.post("/events/tickets", &json!({}));
    let other = server.client("").get(&format!(
        "/reviews?ticket={}",
        second.body["ticket"].as_str().unwrap()
    ));
    assert_eq!(other.status, 401);
    // A ticket of a key revoked since opens nothing.
    let (_, out, _) = server.keys(&[
        "add",
        "--kind",
        "reviewer",
        "--role",
        "reviewer",
        "--label",
        "soon revoked",
    ]);
    let key = out.lines().next().unwrap().to_owned();
    let doomed = server.client(&key).post("/events/tickets", &json!({}));
    assert_eq!(doomed.status, 201);
    let listed = server.keys(&["list"]).1;
    let id = listed
        .lines()
        .find(|l| l.contains("soon revoked"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    server.keys(&["revoke", &id]);
    let (revoked, _) = open_events(
        &server,
        Opener::Ticket(doomed.body["ticket"].as_str().unwrap()),
        "",
    );
    assert_eq!(revoked, 401);
}
