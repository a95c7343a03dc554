//! Pairing a phone through the real server: a reviewer key's one-time code
//! becomes the phone's own key with the same roles and owner; its decisions
//! record that key; a used or expired code is refused, saying which; a
//! revoked device's next request is 401. A phone that remembers its key
//! gets its inbox drawn into the desk's page, and nothing else, by its cookie.

use crate::support::{tool_call, Client, Server};
use countersign_server::store::devices::PairingRefused;
use countersign_server::store::keys::KeyKind;
use countersign_server::store::Db;
use serde_json::json;

#[test]
fn a_paired_phone_decides_as_its_own_key_until_it_is_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &[]);
    let (code, out, err) = server.keys(&[
        "add", "--kind", "reviewer", "--owner", "sam", "--role", "reviewer",
    ]);
    assert_eq!(code, 0, "{err}");
    let desktop = server.client(out.lines().next().unwrap());
    let pairing = desktop.post("/pairings", &json!({}));
    assert_eq!(pairing.status, 201, "{}", pairing.text);
    let paired = server.anonymous().post(
        "/pairings/redeem",
        &json!({"code": pairing.body["code"], "device": "Sam's phone"}),
    );
    assert_eq!(paired.status, 201, "{}", paired.text);
    assert_eq!(paired.body["owner"], "sam");
    assert_eq!(paired.body["roles"], json!(["reviewer"]));
    let phone_id = paired.body["key_id"].as_str().unwrap().to_owned();
    let phone = server.client(paired.body["key"].as_str().unwrap());

    let asked = server
        .client(&server.agent)
        .post("/tool-calls", &tool_call(json!({"n": 1})));
    assert_eq!(asked.status, 201, "{}", asked.text);
    let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();
    let approve = json!({"status": "approved", "decided_by_role": "reviewer"});
    let decided = phone.decide(id, "phone-1", &approve);
    assert_eq!(decided.status, 200, "{}", decided.text);
    let decider = &decided.body["review"]["deciders"][0];
    assert_eq!(
        (decider["key_id"].as_str(), decider["owner"].as_str()),
        (Some(phone_id.as_str()), Some("sam"))
    );

    // Listed on both devices, with its last use; the phone knows itself.
    let seen = phone.get("/devices");
    assert_eq!(seen.body["devices"][0]["this_device"], true);
    // The last use is noted beside the request, not before its answer: asked until it is there.
    let mut listed = desktop.get("/devices");
    for _ in 0..100 {
        if listed.body["devices"][0]["last_used_at"].is_string() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        listed = desktop.get("/devices");
    }
    let device = &listed.body["devices"][0];
    assert_eq!(
        (device["device"].as_str(), device["this_device"].as_bool()),
        (Some("Sam's phone"), Some(false))
    );
    assert!(device["last_used_at"].is_string(), "{device}");

    let revoked = desktop.post(&format!("/devices/{phone_id}/revoke"), &json!({}));
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    let after = phone.get("/devices");
    assert_eq!((after.status, after.code()), (401, "unauthorized"));
    assert_eq!(
        desktop.get("/devices").status,
        200,
        "the first device is untouched"
    );

    // Revoking the pairing key revokes what it paired, and what those paired.
    let pair = |by: &crate::support::Client, name: &str| {
        let code = by.post("/pairings", &json!({})).body["code"].clone();
        let paired = server
            .anonymous()
            .post("/pairings/redeem", &json!({"code": code, "device": name}));
        assert_eq!(paired.status, 201, "{}", paired.text);
        server.client(paired.body["key"].as_str().unwrap())
    };
    let tablet = pair(&desktop, "tablet");
    let watch = pair(&tablet, "watch");
    let desktop_id = out
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap();
    let (code, _, err) = server.keys(&["revoke", desktop_id]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tablet.get("/devices").status, 401);
    assert_eq!(watch.get("/devices").status, 401);
}

#[test]
fn a_remembered_key_draws_the_page_but_authenticates_no_request() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(
        dist.join("index.html"),
        concat!(
            r#"<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'self'; style-src 'self'; script-src 'self'" />"#,
            r#"<link rel="stylesheet" href="/main-0123456789abcdef.css" /><script>boot()</script></head><body></body></html>"#,
        ),
    )
    .unwrap();
    std::fs::write(dist.join("main-0123456789abcdef.css"), "body { margin: 0 }").unwrap();
    let server = Server::start(dir.path(), &["--app-dir", dist.to_str().unwrap()]);
    let (code, out, err) = server.keys(&["add", "--kind", "reviewer", "--role", "reviewer"]);
    assert_eq!(code, 0, "{err}");
    let desktop = server.client(out.lines().next().unwrap());
    let pairing = desktop.post("/pairings", &json!({}));
    let paired = server.anonymous().post(
        "/pairings/redeem",
        &json!({"code": pairing.body["code"], "device": "Sam's phone"}),
    );
    assert_eq!(paired.status, 201, "{}", paired.text);
    let phone_key = paired.body["key"].as_str().unwrap().to_owned();
    let phone_id = paired.body["key_id"].as_str().unwrap().to_owned();
    let asked = server
        .client(&server.agent)
        .post("/tool-calls", &tool_call(json!({"n": 1})));
    let id = asked.body["outcome"]["confirm_id"].as_str().unwrap();

    let remembered = server.client(&phone_key).post("/page-key", &json!({}));
    assert_eq!(remembered.status, 204, "{}", remembered.text);
    let set = remembered.header("set-cookie").unwrap();
    for part in [
        format!("__Host-countersign_page_key={phone_key}"),
        "HttpOnly".into(),
        "SameSite=Strict".into(),
        "Secure".into(),
        "Path=/".into(),
        "Max-Age=2592000".into(),
    ] {
        assert!(set.split("; ").any(|p| p == part), "{part} in {set}");
    }
    let cookie = format!("__Host-countersign_page_key={phone_key}");
    let site = Client::http(server.url.clone(), None);
    let page = site.send("GET", "/", None, &[("Cookie", &cookie)]);
    assert!(
        page.text
            .contains(r#"<body class="painting"><div class="first-paint""#),
        "{}",
        page.text
    );
    assert!(
        page.text.contains(&format!(r#"href="/reviews/{id}""#)),
        "{}",
        page.text
    );
    assert!(page.text.contains("<style>body { margin: 0 }</style>"));
    assert_eq!(page.header("cache-control"), Some("private, no-store"));
    assert_eq!(page.header("vary"), Some("cookie"));
    // A review's own address comes with the review drawn; another path, an
    // unknown review or no cookie get the page as built.
    let review = site.send(
        "GET",
        &format!("/reviews/{id}"),
        None,
        &[("Cookie", &cookie)],
    );
    assert!(
        review.text.contains(&format!(
            r#"<body class="painting"><div class="first-paint" data-review="{id}">"#
        )),
        "{}",
        review.text
    );
    assert_eq!(review.header("cache-control"), Some("private, no-store"));
    assert!(!review.text.contains("You opened this from an e-mail"));
    // Opened from an e-mail's link, it says so from the first paint, as the app does.
    let mailed = site.send(
        "GET",
        &format!("/reviews/{id}?mail=t"),
        None,
        &[("Cookie", &cookie)],
    );
    assert!(
        mailed.text.contains(&format!(
            r#"</header><p class="notice" role="note">{}</p>"#,
            countersign_markup::mail_notice(true)
        )),
        "{}",
        mailed.text
    );
    for (path, cookie) in [
        (format!("/reviews/{id}"), ""),
        (
            "/reviews/00000000-0000-4000-8000-000000000000".to_owned(),
            cookie.as_str(),
        ),
        ("/reviews/not-an-id".to_owned(), cookie.as_str()),
        ("/settings".to_owned(), cookie.as_str()),
    ] {
        let plain = site.send("GET", &path, None, &[("Cookie", cookie)]);
        assert_eq!(plain.status, 200, "{path}");
        assert!(
            plain.text.contains("<body></body>"),
            "{path}: {}",
            plain.text
        );
    }
    // The cookie is not an API credential: another site can make a browser send it.
    let by_cookie = Client::http(format!("{}/api/v1", server.url), None);
    for (method, path) in [
        ("GET", "/reviews"),
        ("GET", "/inbox?server=x"),
        ("GET", &format!("/reviews/{id}/page?server=x")),
        ("POST", "/pairings"),
    ] {
        let reply = by_cookie.send(method, path, None, &[("Cookie", &cookie)]);
        assert_eq!(
            reply.status, 401,
            "{method} {path} with the cookie alone: {}",
            reply.text
        );
    }
    // Only a reviewer key is remembered; forgetting needs no key.
    let agent = server.client(&server.agent).post("/page-key", &json!({}));
    assert_eq!((agent.status, agent.code()), (403, "wrong_key_kind"));
    let forgotten = server.anonymous().post("/page-key/forget", &json!({}));
    assert_eq!(forgotten.status, 204);
    let cleared = forgotten.header("set-cookie").unwrap();
    assert!(
        cleared.starts_with("__Host-countersign_page_key=;"),
        "{cleared}"
    );
    assert!(cleared.contains("Max-Age=0"), "{cleared}");

    // A revoked key draws nothing: the page as built.
    let revoked = desktop.post(&format!("/devices/{phone_id}/revoke"), &json!({}));
    assert_eq!(revoked.status, 200, "{}", revoked.text);
    let plain = site.send("GET", "/", None, &[("Cookie", &cookie)]);
    assert_eq!(plain.status, 200);
    assert!(!plain.text.contains("first-paint"), "{}", plain.text);
    assert!(plain.text.contains("<body></body>"));
}

#[test]
fn a_used_or_expired_code_is_refused_saying_which() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let url = format!("sqlite://{}", dir.path().join("db.sqlite").display());
        let db = Db::open(&url).await.unwrap();
        let key = db
            .add_key(KeyKind::Reviewer, &["reviewer".into()], "desk", None, None)
            .await
            .unwrap()
            .key;
        let (code, _) = db
            .add_pairing_code(&key, chrono::Duration::minutes(10))
            .await
            .unwrap();
        assert!(db.pair_device(&code, "phone").await.unwrap().is_ok());
        let again = db.pair_device(&code, "phone").await.unwrap().unwrap_err();
        assert_eq!(again, PairingRefused::Used);
        assert!(again.to_string().contains("already used"));
        let (stale, _) = db
            .add_pairing_code(&key, chrono::Duration::seconds(-1))
            .await
            .unwrap();
        let expired = db.pair_device(&stale, "phone").await.unwrap().unwrap_err();
        assert!(matches!(expired, PairingRefused::Expired(_)), "{expired:?}");
        assert!(expired.to_string().contains("expired at"), "{expired}");
        let (orphan, _) = db
            .add_pairing_code(&key, chrono::Duration::minutes(10))
            .await
            .unwrap();
        assert!(db.revoke_key(&key.id).await.unwrap());
        let refused = db.pair_device(&orphan, "phone").await.unwrap().unwrap_err();
        assert_eq!(refused, PairingRefused::Revoked);
    });
}
