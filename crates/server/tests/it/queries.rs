//! The inbox's queries, in process (`InProcess`: the router over a fresh
//! SQLite file): pages in both orders with their cursors, rows as summaries,
//! text search through the index, and the list of changes after a position.

use crate::support::{confirm_id, found, review, Client, InProcess};
use serde_json::json;

#[test]
fn the_changes_after_a_position_are_what_changed_since_each_with_its_row() {
    let server = InProcess::start();
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    let start = reviewer.get("/reviews?view=summary&limit=1").body["position"]
        .as_i64()
        .unwrap();
    assert_eq!(agent.post("/reviews", &review(8, 2, false)).status, 201);
    assert_eq!(agent.post("/reviews", &review(9, 2, false)).status, 201);
    let decided = reviewer.decide(
        &confirm_id(8),
        "c-1",
        &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Not now"}),
    );
    assert_eq!(decided.status, 200);
    let page: countersign_domain::wire::ChangePage =
        serde_json::from_value(reviewer.get(&format!("/changes?after={start}")).body).unwrap();
    let seen: Vec<(String, &str)> = page
        .changes
        .iter()
        .map(|c| (c.summary.id.to_string(), c.kind.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (confirm_id(8), "review.created"),
            (confirm_id(9), "review.created"),
            (confirm_id(8), "review.decided"),
        ]
    );
    // Each row is the review as it is now (the first change of 8 shows it rejected).
    assert!(page
        .changes
        .iter()
        .filter(|c| c.summary.id.to_string() == confirm_id(8))
        .all(|c| c.summary.status == countersign_domain::model::ConfirmStatus::Rejected));
    assert!(!page.more);
    assert_eq!(page.position, page.changes[2].seq);
    // Nothing changed since: an empty page that keeps its position.
    let after = reviewer.get(&format!("/changes?after={}", page.position));
    assert_eq!(after.body["changes"], json!([]));
    assert_eq!(after.body["position"], page.position);
    // Paged: as many as asked, and more is said to follow.
    let first = reviewer
        .get(&format!("/changes?after={start}&limit=2"))
        .body;
    assert_eq!(
        (first["changes"].as_array().unwrap().len(), &first["more"]),
        (2, &json!(true))
    );
}

#[test]
fn a_page_of_summaries_says_what_the_rows_show_in_a_fraction_of_the_bytes() {
    let server = InProcess::start();
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=20 {
        assert_eq!(agent.post("/reviews", &review(n, 12, false)).status, 201);
    }
    let decided = reviewer.decide(
        &confirm_id(3),
        "v-1",
        &json!({"status": "approved", "decided_by_role": "reviewer", "reason": "ok"}),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    let query = "/reviews?requester=deploy-agent&limit=50";
    let full = reviewer.get(query);
    let rows = reviewer.get(&format!("{query}&view=summary"));
    assert_eq!(rows.status, 200, "{}", rows.text);
    let reviews = full.body["items"].as_array().unwrap();
    let summaries = rows.body["items"].as_array().unwrap();
    assert_eq!(summaries.len(), reviews.len());
    // Each row is exactly the domain's summary of its review (the one the app shows).
    for (review, summary) in reviews.iter().zip(summaries) {
        let review: countersign_domain::Review = serde_json::from_value(review.clone()).unwrap();
        let expected = countersign_domain::wire::ReviewSummary::of(&review);
        assert_eq!(summary, &serde_json::to_value(&expected).unwrap());
    }
    let third = summaries.iter().find(|s| s["id"] == confirm_id(3)).unwrap();
    assert_eq!(
        (third["status"].as_str(), third["decisions"].as_u64()),
        (Some("approved"), Some(1))
    );
    assert_eq!(rows.body["counts"], full.body["counts"]);
    println!(
        "a page of {} reviews of 12 steps: whole {} bytes, summaries {} bytes",
        reviews.len(),
        full.text.len(),
        rows.text.len()
    );
    assert!(rows.text.len() * 5 < full.text.len());
    let bad = reviewer.get("/reviews?view=rows");
    assert_eq!((bad.status, bad.paths()), (400, vec!["view".to_owned()]));
}

/// Every id of the test reviews, page by page (3 a page) in `order`.
fn every_page(reviewer: &Client, order: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = reviewer.get(&format!(
            "/reviews?requester=deploy-agent&view=summary&limit=3&order={order}{cursor}"
        ));
        assert_eq!(page.status, 200, "{}", page.text);
        ids.extend(
            page.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_owned()),
        );
        match page.body["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => return ids,
        }
    }
}

#[test]
fn the_list_pages_newest_first_as_well_as_oldest_first() {
    let server = InProcess::start();
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=10 {
        let mut asked = review(n, 2, false);
        // Two share a request time: the id orders them, both ways.
        let minute = if n == 5 { 4 } else { n };
        asked["confirm"]["requested_at"] = json!(format!("2026-11-01T10:{minute:02}:00Z"));
        assert_eq!(agent.post("/reviews", &asked).status, 201);
    }
    let oldest = every_page(&reviewer, "oldest");
    assert_eq!(oldest.len(), 10);
    let mut newest = every_page(&reviewer, "newest");
    assert_eq!(newest.first(), Some(&confirm_id(10)));
    newest.reverse();
    assert_eq!(newest, oldest);
    let bad = reviewer.get("/reviews?order=random");
    assert_eq!((bad.status, bad.paths()), (400, vec!["order".to_owned()]));
}

#[test]
fn text_search_finds_any_substring_through_the_index_also_after_the_text_changed() {
    let server = InProcess::start();
    let agent = server.client(&server.agent);
    let reviewer = server.client(&server.reviewer);
    for n in 1..=30 {
        assert_eq!(agent.post("/reviews", &review(n, 2, false)).status, 201);
    }
    // Whole words, parts of words, any case: a substring, as before the index.
    assert_eq!(found(&reviewer, "Test Request 17"), vec![confirm_id(17)]);
    let mut teens = found(&reviewer, "equest 1");
    teens.sort();
    let mut expected: Vec<String> = [1].into_iter().chain(10..=19).map(confirm_id).collect();
    expected.sort();
    assert_eq!(teens, expected);
    // Shorter than a trigram: scanned, same meaning (0x17 = 23 holds "17" in its id).
    let short = found(&reviewer, "17");
    assert!(
        short.contains(&confirm_id(17)) && short.contains(&confirm_id(23)),
        "{short:?}"
    );
    // Quotes, wildcards and FTS syntax are text, not query language.
    assert!(found(&reviewer, "a\"b OR c*").is_empty());
    assert!(found(&reviewer, "100%_").is_empty());
    // A resubmission changes the text: the index follows.
    let id = confirm_id(5);
    let rejected = reviewer.decide(
        &id,
        "s-1",
        &json!({"status": "rejected", "decided_by_role": "reviewer", "reason": "Too wide"}),
    );
    assert_eq!(rejected.status, 200, "{}", rejected.text);
    let resubmitted = agent.post(
        &format!("/reviews/{id}/resubmit"),
        &json!({"by_role": "deploy-agent", "reason": "Rollback window moved to Friday"}),
    );
    assert_eq!(resubmitted.status, 200, "{}", resubmitted.text);
    assert_eq!(found(&reviewer, "window moved to fri"), vec![id.clone()]);
    assert!(!found(&reviewer, "test request 5").contains(&id));
}
