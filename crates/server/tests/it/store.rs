//! The storage layer's queries, in process, on SQLite and on PostgreSQL: the
//! same calls must give the same answers on both (pages and their cursors,
//! filters, text search, counts, the change feed, compare-and-swap and the
//! idempotency records). The HTTP tests reach these through the server; here
//! each query is checked on its own.

use crate::support::on_both;
use countersign_domain::demo::{numbered, numbered_id};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::wire::{ChangeKind, Order, ReviewQuery, ReviewSummary};
use countersign_domain::Review;
use countersign_server::store::{ChangeError, Cursor, Db, IdempotencyRecord, IdempotentResult};

/// Reviews 1..=COUNT: plans asked by `agent-0` … `agent-6`.
const COUNT: usize = 30;

/// A store holding reviews 1..=COUNT.
async fn seeded(db: &Db) -> Vec<Review> {
    let reviews: Vec<Review> = (1..=COUNT).map(|n| numbered(n).unwrap()).collect();
    assert_eq!(
        db.insert_reviews(&reviews, "key_test").await.unwrap(),
        COUNT as u64
    );
    reviews
}

fn query(limit: u32) -> ReviewQuery {
    ReviewQuery {
        limit,
        ..ReviewQuery::default()
    }
}

/// Every id of every page of `query`, following the cursors.
async fn every_page(db: &Db, query: &ReviewQuery) -> Vec<String> {
    let mut ids = Vec::new();
    let mut after: Option<Cursor> = None;
    loop {
        let counts = db.status_counts().await.unwrap();
        let page = db
            .list_summaries(query, after.as_ref(), &counts)
            .await
            .unwrap();
        assert!(page.items.len() <= query.limit as usize);
        ids.extend(page.items.iter().map(|s| s.id.to_string()));
        match page.next {
            Some(next) => after = Some(next),
            None => return ids,
        }
    }
}

/// Review `n` as stored.
async fn stored(db: &Db, n: usize) -> countersign_server::store::Stored {
    db.review(numbered_id(n).parse().unwrap())
        .await
        .unwrap()
        .unwrap()
}

fn approved(review: &Review) -> Review {
    countersign_domain::demo::approved(review, chrono::Utc::now()).unwrap()
}

#[test]
fn pages_follow_their_cursors_through_every_review_once_in_every_order() {
    on_both("store_pages", |db| {
        Box::pin(async move {
            let mut reviews = seeded(&db).await;
            // The demo's tool calls have deadlines; its plans have none.
            let demo = countersign_domain::demo::reviews(chrono::Utc::now()).unwrap();
            db.insert_reviews(&demo, "key_test").await.unwrap();
            reviews.extend(demo);
            let summaries: Vec<ReviewSummary> = reviews.iter().map(ReviewSummary::of).collect();
            assert!(summaries.iter().any(|s| s.expires.is_some()));
            for order in Order::ALL {
                let mut expected = summaries.clone();
                expected.sort_by(|a, b| order.compare(a, b));
                let expected: Vec<String> = expected.iter().map(|s| s.id.to_string()).collect();
                let asked = ReviewQuery { order, ..query(7) };
                assert_eq!(every_page(&db, &asked).await, expected, "{order:?}");
                // The full documents page the same way.
                let counts = db.status_counts().await.unwrap();
                let page = db.list_reviews(&asked, None, &counts).await.unwrap();
                let ids: Vec<String> = page
                    .items
                    .iter()
                    .map(|r| r.confirm.confirm_id.to_string())
                    .collect();
                assert_eq!(ids, expected[..7], "{order:?}");
            }
        })
    });
}

#[test]
fn a_cursor_continues_only_the_order_it_came_from() {
    let cursor = Cursor {
        deadline: Some("2026-01-01T00:05:00.000000Z".into()),
        requested_at: "2026-01-01T00:00:00.000000Z".into(),
        id: numbered_id(1),
    };
    let text = cursor.encode();
    assert_eq!(Cursor::decode(&text, Order::Expiring), Some(cursor));
    assert_eq!(Cursor::decode(&text, Order::Oldest), None);
    let plain = "2026-01-01T00:00:00.000000Z~".to_owned() + &numbered_id(1);
    assert_eq!(Cursor::decode(&plain, Order::Expiring), None);
    assert!(Cursor::decode(&plain, Order::Newest).is_some());
}

#[test]
fn filters_and_text_search_find_the_same_reviews_on_both_databases() {
    on_both("store_filters", |db| {
        Box::pin(async move {
            seeded(&db).await;
            let mut by_agent = query(100);
            by_agent.requester = Some("agent-3".into());
            let mut found = every_page(&db, &by_agent).await;
            found.sort();
            let mut expected: Vec<String> = (1..=COUNT)
                .filter(|n| n % 7 == 3)
                .map(numbered_id)
                .collect();
            expected.sort();
            assert_eq!(found, expected);
            // Any substring, any case; wildcards are text.
            let mut text = query(100);
            text.text = "REQUEST 2".into();
            let mut found = every_page(&db, &text).await;
            found.sort();
            let mut expected: Vec<String> =
                [2].into_iter().chain(20..=29).map(numbered_id).collect();
            expected.sort();
            assert_eq!(found, expected);
            text.text = "request 2 production".into();
            assert!(every_page(&db, &text).await.is_empty());
            text.text = "100%_".into();
            assert!(every_page(&db, &text).await.is_empty());
            let mut approved_only = query(100);
            approved_only.status = Some(ConfirmStatus::Approved);
            assert!(every_page(&db, &approved_only).await.is_empty());
            let requesters = db.requesters(100).await.unwrap();
            let expected: Vec<String> = (0..7).map(|n| format!("agent-{n}")).collect();
            assert_eq!(requesters, expected);
            assert_eq!(db.requesters(2).await.unwrap(), expected[..2]);
        })
    });
}

#[test]
fn counts_oldest_pending_and_the_feed_follow_each_stored_change() {
    on_both("store_feed", |db| {
        Box::pin(async move {
            let reviews = seeded(&db).await;
            assert_eq!(db.status_counts().await.unwrap().pending, COUNT as u64);
            let oldest = reviews
                .iter()
                .map(|r| r.confirm.requested_at.to_utc())
                .min()
                .unwrap();
            assert_eq!(db.oldest_pending().await.unwrap(), Some(oldest));
            assert_eq!(db.last_change().await.unwrap(), COUNT as i64);
            let stored = db
                .review(numbered_id(4).parse().unwrap())
                .await
                .unwrap()
                .unwrap();
            db.replace_review(
                &stored,
                &approved(&stored.review),
                ChangeKind::Decided,
                None,
            )
            .await
            .unwrap();
            let counts = db.status_counts().await.unwrap();
            assert_eq!((counts.pending, counts.approved), (COUNT as u64 - 1, 1));
            let changes = db.changes_after(COUNT as i64 - 1, 10).await.unwrap();
            let seen: Vec<(ChangeKind, ConfirmStatus)> =
                changes.iter().map(|c| (c.kind, c.status)).collect();
            assert_eq!(
                seen,
                [
                    (ChangeKind::Created, ConfirmStatus::Pending),
                    (ChangeKind::Decided, ConfirmStatus::Approved)
                ]
            );
            assert_eq!(changes[1].confirm_id, numbered_id(4));
            assert_eq!(changes[1].summary.status, ConfirmStatus::Approved);
            let with_docs = db.feed_after(COUNT as i64, 10).await.unwrap();
            assert_eq!(with_docs.len(), 1);
            assert_eq!(with_docs[0].1["confirm"]["status"], "approved");
        })
    });
}

#[test]
fn a_stale_change_is_refused_and_an_idempotency_record_is_kept_once() {
    on_both("store_cas", |db| {
        Box::pin(async move {
            seeded(&db).await;
            let stored = db
                .review(numbered_id(9).parse().unwrap())
                .await
                .unwrap()
                .unwrap();
            let next = approved(&stored.review);
            let result = IdempotentResult {
                request: "{\"status\":\"approved\"}".into(),
                response: "{\"ok\":true}".into(),
            };
            let record = IdempotencyRecord {
                key_id: "key_r".into(),
                key: "idem-1".into(),
                first: result.clone(),
            };
            db.replace_review(&stored, &next, ChangeKind::Decided, Some(record.clone()))
                .await
                .unwrap();
            let kept = db
                .idempotent_result("key_r", "idem-1")
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                (kept.request, kept.response),
                (result.request.clone(), result.response.clone())
            );
            assert!(db
                .idempotent_result("key_r", "idem-2")
                .await
                .unwrap()
                .is_none());
            // Read at the old version: someone changed it meanwhile.
            let again = db
                .replace_review(&stored, &next, ChangeKind::Decided, None)
                .await;
            assert!(matches!(again, Err(ChangeError::Stale)), "{again:?}");
            // The same key again: a duplicate request, and nothing changes.
            let fresh = db
                .review(numbered_id(10).parse().unwrap())
                .await
                .unwrap()
                .unwrap();
            let duplicate = db
                .replace_review(
                    &fresh,
                    &approved(&fresh.review),
                    ChangeKind::Decided,
                    Some(record),
                )
                .await;
            assert!(
                matches!(duplicate, Err(ChangeError::DuplicateRequest)),
                "{duplicate:?}"
            );
            let unchanged = db
                .review(numbered_id(10).parse().unwrap())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(unchanged.version, fresh.version);
        })
    });
}

#[test]
fn changes_refused_beside_others_leave_the_others_stored_and_the_audit_chain_whole() {
    on_both("store_mixed_batch", |db| {
        Box::pin(async move {
            seeded(&db).await;
            let read = |n| stored(&db, n);
            let record = |key: &str| IdempotencyRecord {
                key_id: "key_r".into(),
                key: key.into(),
                first: IdempotentResult {
                    request: format!("{{\"key\":\"{key}\"}}"),
                    response: "{\"ok\":true}".into(),
                },
            };
            // Review 17 read, then changed by someone else; key `taken`
            // stored with a decision of review 18.
            let (stale, taken) = (read(17).await, read(18).await);
            db.replace_review(&stale, &approved(&stale.review), ChangeKind::Decided, None)
                .await
                .unwrap();
            db.replace_review(
                &taken,
                &approved(&taken.review),
                ChangeKind::Decided,
                Some(record("taken")),
            )
            .await
            .unwrap();
            let fresh: Vec<_> = futures_util::future::join_all((11..=16).map(read)).await;
            let other = read(19).await;
            // Submitted together, so the writer usually takes them in one
            // batch: the two refused ones must not keep the others out.
            let (stale_next, other_next) = (approved(&stale.review), approved(&other.review));
            let nexts: Vec<Review> = fresh
                .iter()
                .map(|stored| approved(&stored.review))
                .collect();
            let records: Vec<IdempotencyRecord> =
                (0..6).map(|i| record(&format!("fresh-{i}"))).collect();
            let mut changes: Vec<_> = fresh
                .iter()
                .zip(&nexts)
                .zip(&records)
                .map(|((stored, next), record)| {
                    db.replace_review(stored, next, ChangeKind::Decided, Some(record.clone()))
                })
                .collect();
            changes.push(db.replace_review(
                &stale,
                &stale_next,
                ChangeKind::Decided,
                Some(record("late")),
            ));
            changes.push(db.replace_review(
                &other,
                &other_next,
                ChangeKind::Decided,
                Some(record("taken")),
            ));
            let results = futures_util::future::join_all(changes).await;
            for result in &results[..6] {
                assert!(result.is_ok(), "{result:?}");
            }
            assert!(
                matches!(results[6], Err(ChangeError::Stale)),
                "{:?}",
                results[6]
            );
            assert!(
                matches!(results[7], Err(ChangeError::DuplicateRequest)),
                "{:?}",
                results[7]
            );
            for (n, stored) in (11..=16).zip(&fresh) {
                assert_eq!(read(n).await.version, stored.version + 1);
            }
            assert_eq!(read(19).await.version, other.version);
            for i in 0..6 {
                let key = format!("fresh-{i}");
                assert!(db.idempotent_result("key_r", &key).await.unwrap().is_some());
            }
            // The stale change's record went with it: a retry may go ahead.
            assert!(db
                .idempotent_result("key_r", "late")
                .await
                .unwrap()
                .is_none());
            match db.verify_audit().await.unwrap() {
                countersign_server::store::audit::Verdict::Intact { entries, .. } => {
                    assert_eq!(entries, COUNT as i64 + 2 + 6)
                }
                broken => panic!("{broken:?}"),
            }
        })
    });
}

#[test]
fn a_change_that_keeps_the_search_text_and_one_that_replaces_it_land_together() {
    on_both("store_search_kept", |db| {
        Box::pin(async move {
            seeded(&db).await;
            let read = |n| stored(&db, n);
            let (five, six) = (read(5).await, read(6).await);
            let mut reworded = six.review.clone();
            reworded.confirm.reason = Some("Zebra crossing".into());
            // Submitted together, so the writer usually takes both in one
            // batch (one statement each); either way both must land.
            let decided = approved(&five.review);
            let (a, b) = tokio::join!(
                db.replace_review(&five, &decided, ChangeKind::Decided, None),
                db.replace_review(&six, &reworded, ChangeKind::Resubmitted, None),
            );
            a.unwrap();
            b.unwrap();
            let search = |text: &str, status: Option<ConfirmStatus>| {
                let mut q = query(100);
                q.text = text.into();
                q.status = status;
                q
            };
            assert_eq!(
                every_page(&db, &search("zebra", None)).await,
                [numbered_id(6)]
            );
            assert!(every_page(&db, &search("request 6:", None))
                .await
                .is_empty());
            assert_eq!(
                every_page(&db, &search("request 5:", Some(ConfirmStatus::Approved))).await,
                [numbered_id(5)]
            );
            assert!(
                every_page(&db, &search("request 5:", Some(ConfirmStatus::Pending)))
                    .await
                    .is_empty()
            );
            assert_eq!(read(5).await.version, five.version + 1);
            assert_eq!(read(6).await.review, reworded);
        })
    });
}

#[test]
fn a_search_finds_texts_too_long_for_an_index_entry_in_every_order() {
    on_both("store_long_search", |db| {
        Box::pin(async move {
            // PostgreSQL keeps a text of more than 2,000 bytes out of its
            // searchable index (migration 0023): it must still be found, in
            // its place in the order, a page of one at a time.
            let mut long = numbered(1).unwrap();
            long.confirm.reason = Some(format!("{} needle", "x".repeat(3_000)));
            let mut short = numbered(2).unwrap();
            short.confirm.reason = Some("a needle".into());
            let reviews = [long, short, numbered(3).unwrap()];
            db.insert_reviews(&reviews, "key_test").await.unwrap();
            let (first, second) = (numbered_id(1), numbered_id(2));
            for (order, expected) in [
                (Order::Expiring, [first.as_str(), &second]),
                (Order::Oldest, [&first, &second]),
                (Order::Newest, [&second, &first]),
            ] {
                for status in [None, Some(ConfirmStatus::Pending)] {
                    let mut needle = query(1);
                    needle.text = "NEEDLE".into();
                    needle.order = order;
                    needle.status = status;
                    assert_eq!(
                        every_page(&db, &needle).await,
                        expected,
                        "{order:?} {status:?}"
                    );
                }
            }
        })
    });
}

#[test]
fn sign_ins_are_taken_once_and_sessions_end_for_good_on_both_databases() {
    use countersign_server::store::sessions::{Attempt, NewSession};
    on_both("store_sessions", |db| {
        Box::pin(async move {
            let attempt = Attempt {
                state: "state-1".into(),
                browser: "browser-1".into(),
                provider: "corp".into(),
                nonce: "n".into(),
                verifier: "v".into(),
                expires_at: chrono::Utc::now() + chrono::Duration::minutes(10),
            };
            db.add_sign_in(&attempt).await.unwrap();
            let taken = db.take_sign_in("state-1").await.unwrap().unwrap();
            assert!(taken.in_time);
            assert_eq!(taken.provider, "corp");
            assert!(
                db.take_sign_in("state-1").await.unwrap().is_none(),
                "a replayed state finds nothing"
            );
            let dana = countersign_domain::Person {
                issuer: "https://idp.example".into(),
                subject: "dana".into(),
                name: Some("Dana".into()),
                email: None,
            };
            let roles = vec!["reviewer".to_owned()];
            let new = || NewSession {
                person: &dana,
                provider: "corp",
                roles: &roles,
                refresh_token: Some("r1"),
                user_agent: Some("test"),
                length: chrono::Duration::hours(1),
            };
            let first = db.open_session(new()).await.unwrap();
            let second = db.open_session(new()).await.unwrap();
            let found = db.session_for_secret(&first.secret).await.unwrap().unwrap();
            assert_eq!(found.id, first.session.id);
            assert_eq!(found.person, dana);
            assert_eq!(found.refresh_token.as_deref(), Some("r1"));
            assert_eq!(db.sessions(Some(&dana)).await.unwrap().len(), 2);
            assert!(db
                .end_session(&first.session.id, "signed out")
                .await
                .unwrap());
            assert!(!db.end_session(&first.session.id, "again").await.unwrap());
            assert!(db
                .session_for_secret(&first.secret)
                .await
                .unwrap()
                .is_none());
            let ended = db.session(&first.session.id).await.unwrap().unwrap();
            assert_eq!(ended.ended_why.as_deref(), Some("signed out"));
            assert_eq!(ended.refresh_token, None, "an ended session keeps no token");
            assert!(db
                .session_for_secret(&second.secret)
                .await
                .unwrap()
                .is_some());
            // Started, roles changed, ended: each in the audit chain, which holds.
            let none: Vec<String> = Vec::new();
            for token in ["r2", "r3"] {
                db.revalidate_session(&second.session.id, &dana, &none, Some(token))
                    .await
                    .unwrap();
            }
            let again = db
                .session_for_secret(&second.secret)
                .await
                .unwrap()
                .unwrap();
            assert!(again.roles.is_empty());
            assert_eq!(again.refresh_token.as_deref(), Some("r3"));
            // A session past its time is not one any more.
            let brief = NewSession {
                length: chrono::Duration::milliseconds(300),
                ..new()
            };
            let short = db.open_session(brief).await.unwrap();
            assert!(db
                .session_for_secret(&short.secret)
                .await
                .unwrap()
                .is_some());
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            assert!(db
                .session_for_secret(&short.secret)
                .await
                .unwrap()
                .is_none());
            match db.verify_audit().await.unwrap() {
                countersign_server::store::audit::Verdict::Intact { entries, .. } => assert_eq!(
                    entries, 5,
                    "3 started, 1 ended, 1 roles changed (not the check that changed nothing)"
                ),
                broken => panic!("{broken:?}"),
            }
        })
    });
}

#[test]
fn a_slack_link_needs_a_live_code_taken_once_and_a_signed_in_person_on_both_databases() {
    use countersign_domain::wire::SlackUser;
    use countersign_server::store::sessions::NewSession;
    use countersign_server::store::slack::NotLinked;
    on_both("store_slack", |db| {
        Box::pin(async move {
            let user = SlackUser {
                team_id: "T1".into(),
                user_id: "U1".into(),
                user_name: "dana".into(),
            };
            let dana = countersign_domain::Person {
                issuer: "https://idp.example".into(),
                subject: "dana".into(),
                name: Some("Dana".into()),
                email: None,
            };
            let later = chrono::Utc::now() + chrono::Duration::minutes(10);
            let code = db.new_slack_link_code(&user, later).await.unwrap();
            assert_eq!(db.slack_link_code(&code).await.unwrap(), Some(user.clone()));
            assert!(
                matches!(db.link_slack(&code, &dana).await, Err(NotLinked::NoPerson)),
                "nobody signed in as Dana yet"
            );
            // Nothing was changed: the code still waits for a signed-in person.
            assert_eq!(db.slack_link_code(&code).await.unwrap(), Some(user.clone()));
            assert!(
                db.slack_session("T1", "U1").await.unwrap().is_none(),
                "not linked"
            );
            let roles = vec!["reviewer".to_owned()];
            let opened = db
                .open_session(NewSession {
                    person: &dana,
                    provider: "corp",
                    roles: &roles,
                    refresh_token: None,
                    user_agent: None,
                    length: chrono::Duration::hours(1),
                })
                .await
                .unwrap();
            let link = db.link_slack(&code, &dana).await.unwrap();
            assert_eq!(link.user, user);
            assert!(
                matches!(db.link_slack(&code, &dana).await, Err(NotLinked::Unknown)),
                "a code works once"
            );
            assert_eq!(db.slack_links(&dana).await.unwrap(), vec![link]);
            let session = db
                .slack_session("T1", "U1")
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            assert_eq!(session.id, opened.session.id);
            // Signed out: linked, but no session to decide with.
            assert!(db
                .end_session(&opened.session.id, "signed out")
                .await
                .unwrap());
            assert!(matches!(
                db.slack_session("T1", "U1").await.unwrap(),
                Some(None)
            ));
            // An expired code links nobody.
            let past = chrono::Utc::now() - chrono::Duration::seconds(1);
            let stale = db.new_slack_link_code(&user, past).await.unwrap();
            assert_eq!(db.slack_link_code(&stale).await.unwrap(), None);
            assert!(matches!(
                db.link_slack(&stale, &dana).await,
                Err(NotLinked::Expired)
            ));
            // Unlinked by its person only.
            let erin = countersign_domain::Person {
                subject: "erin".into(),
                ..dana.clone()
            };
            assert!(!db.unlink_slack(&erin, "T1", "U1").await.unwrap());
            assert!(db.unlink_slack(&dana, "T1", "U1").await.unwrap());
            assert!(db.slack_session("T1", "U1").await.unwrap().is_none());
            match db.verify_audit().await.unwrap() {
                countersign_server::store::audit::Verdict::Intact { entries, .. } => assert_eq!(
                    entries, 4,
                    "a session started and ended, a link made and removed"
                ),
                broken => panic!("{broken:?}"),
            }
        })
    });
}

#[test]
fn a_reader_placed_before_changes_is_given_them_from_its_first_turn_on_both_databases() {
    on_both("store_reader_placed", |db| {
        Box::pin(async move {
            db.reader_placed("mail").await.unwrap();
            seeded(&db).await;
            let now = chrono::Utc::now();
            let lease = now + chrono::Duration::seconds(60);
            let first = db.reader_turn("mail", "a", now, lease).await.unwrap();
            let told = db.changes_after(first.unwrap(), 1000).await.unwrap();
            assert_eq!(told.len(), COUNT, "every review stored after it was placed");
            db.reader_placed("mail").await.unwrap();
            let again = db.reader_turn("mail", "a", now, lease).await.unwrap();
            assert_eq!(again, first, "placing it again keeps its place");
        })
    });
}

#[test]
fn one_instance_at_a_time_posts_to_slack_and_a_review_keeps_its_message_on_both_databases() {
    use countersign_server::store::slack_posts::Posted;
    on_both("store_slack_posts", |db| {
        Box::pin(async move {
            let reviews = seeded(&db).await;
            let newest = db.changes_after(0, 1000).await.unwrap().last().unwrap().seq;
            let now = chrono::Utc::now();
            let lease = now + chrono::Duration::seconds(60);
            // The first turn starts at the newest change: no history is posted.
            assert_eq!(
                db.reader_turn("slack", "a", now, lease).await.unwrap(),
                Some(newest)
            );
            assert_eq!(
                db.reader_turn("slack", "b", now, lease).await.unwrap(),
                None,
                "a holds it"
            );
            assert!(db
                .reader_moved("slack", "a", newest + 1, lease)
                .await
                .unwrap());
            assert!(!db
                .reader_moved("slack", "b", newest + 2, lease)
                .await
                .unwrap());
            // A lease run out is taken by another instance, from where a stopped.
            let later = lease + chrono::Duration::seconds(1);
            let next = later + chrono::Duration::seconds(60);
            assert_eq!(
                db.reader_turn("slack", "b", later, next).await.unwrap(),
                Some(newest + 1)
            );
            assert!(
                !db.reader_moved("slack", "a", newest + 3, next)
                    .await
                    .unwrap(),
                "a lost it"
            );

            let id = reviews[0].confirm.confirm_id;
            let first = Posted {
                channel: "C0REVIEWS".into(),
                ts: "1.000001".into(),
            };
            let other = Posted {
                channel: "C0OPSTEAM".into(),
                ts: "1.000002".into(),
            };
            db.slack_posted(id, &first).await.unwrap();
            db.slack_posted(id, &other).await.unwrap();
            let again = Posted {
                ts: "1.000003".into(),
                ..first.clone()
            };
            db.slack_posted(id, &again).await.unwrap();
            let mut messages = db.slack_messages(&id.to_string()).await.unwrap();
            messages.sort_by(|a, b| a.channel.cmp(&b.channel));
            assert_eq!(messages, vec![other, again]);
        })
    });
}

#[test]
fn an_e_mail_link_is_kept_as_a_hash_and_spent_once_on_both_databases() {
    on_both("store_mail_links", |db| {
        Box::pin(async move {
            let review = seeded(&db).await[0].confirm.confirm_id;
            let until = chrono::Utc::now() + chrono::Duration::days(7);
            let token = db
                .new_mail_link(review, "dana@example.com", until)
                .await
                .unwrap();
            let link = db.mail_link(&token).await.unwrap().unwrap();
            assert_eq!(link.review_id, review.to_string());
            assert_eq!(link.email, "dana@example.com");
            assert!(!link.used);
            assert!(db.mail_link("mlk_0000").await.unwrap().is_none());
            assert!(db.spend_mail_link(&token).await.unwrap());
            assert!(!db.spend_mail_link(&token).await.unwrap(), "spent once");
            assert!(db.mail_link(&token).await.unwrap().unwrap().used);
        })
    });
}
