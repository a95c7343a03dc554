//! What Slack posts when a reviewer clicks a button of a Countersign
//! message: a form with one field, `payload`, holding the JSON of a
//! `block_actions` interaction. Parsed here into what Countersign acts on,
//! once; nothing past this module reads Slack's JSON.

use countersign_domain::MplpId;
use serde::Deserialize;
use std::collections::HashMap;

/// The button that approves a request; its value is the review's id.
pub const APPROVE: &str = "countersign_approve";
/// The button that denies a request; its value is the review's id.
pub const DENY: &str = "countersign_deny";
/// The button that opens the review in the desk (a link; Slack reports
/// its clicks too, which need no answer).
pub const OPEN: &str = "countersign_open";
/// The text input beside the buttons that carries a denial's reason.
pub const REASON: &str = "countersign_reason";

/// What the reviewer asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Approve the request.
    Approve,
    /// Deny it (a reason is required).
    Deny,
}

/// One click, as Countersign acts on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Click {
    /// The Slack workspace.
    pub team: String,
    /// The Slack user who clicked.
    pub user: String,
    /// Their Slack handle, for messages.
    pub user_name: String,
    /// What they asked for.
    pub choice: Choice,
    /// On which review.
    pub review: MplpId,
    /// The reason typed beside the buttons, if any.
    pub reason: Option<String>,
    /// Slack's id of this click: one click decides once, however often the
    /// request is sent again.
    pub action_ts: String,
    /// Where the message is answered and updated.
    pub response_url: String,
}

/// Why a posted interaction is not a click Countersign acts on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAClick {
    /// The form has no `payload` field.
    #[error("the request has no `payload` field: Slack sends interactions as a form with one")]
    NoPayload,
    /// The payload is not the JSON of an interaction.
    #[error("the payload is not an interaction Countersign knows: {0}")]
    Malformed(String),
    /// Another kind of interaction (a shortcut, a modal…).
    #[error("Countersign answers button clicks only, not `{0}`")]
    OtherKind(String),
    /// A button that is not one of Countersign's deciding buttons (the
    /// desk's link, or another app's).
    #[error("the button `{0}` is not one of Countersign's")]
    OtherButton(String),
    /// The button's value is not a review's id.
    #[error("the button's value `{0}` is not a review's id")]
    BadReview(String),
}

#[derive(Deserialize)]
struct Interaction {
    #[serde(rename = "type")]
    kind: String,
    user: Option<User>,
    team: Option<Team>,
    #[serde(default)]
    actions: Vec<Action>,
    response_url: Option<String>,
    state: Option<State>,
}

#[derive(Deserialize)]
struct User {
    id: String,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    team_id: Option<String>,
}

#[derive(Deserialize)]
struct Team {
    id: String,
}

#[derive(Deserialize)]
struct Action {
    action_id: String,
    #[serde(default)]
    value: Option<String>,
    action_ts: String,
}

#[derive(Deserialize)]
struct State {
    #[serde(default)]
    values: HashMap<String, HashMap<String, Input>>,
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    value: Option<String>,
}

/// The click in a form-encoded interaction body.
pub fn parse(body: &[u8]) -> Result<Click, NotAClick> {
    let payload = form_urlencoded::parse(body)
        .find(|(name, _)| name == "payload")
        .map(|(_, value)| value)
        .ok_or(NotAClick::NoPayload)?;
    let interaction: Interaction =
        serde_json::from_str(&payload).map_err(|e| NotAClick::Malformed(e.to_string()))?;
    if interaction.kind != "block_actions" {
        return Err(NotAClick::OtherKind(interaction.kind));
    }
    let missing = |what: &str| NotAClick::Malformed(format!("it names no {what}"));
    let user = interaction.user.ok_or_else(|| missing("user"))?;
    let team = interaction
        .team
        .map(|t| t.id)
        .or(user.team_id)
        .ok_or_else(|| missing("team"))?;
    let action = interaction
        .actions
        .into_iter()
        .next()
        .ok_or_else(|| missing("action"))?;
    let choice = match action.action_id.as_str() {
        APPROVE => Choice::Approve,
        DENY => Choice::Deny,
        other => return Err(NotAClick::OtherButton(other.to_owned())),
    };
    let value = action.value.unwrap_or_default();
    let review = value
        .parse()
        .map_err(|_| NotAClick::BadReview(value.clone()))?;
    let reason = interaction.state.and_then(|state| {
        state
            .values
            .into_values()
            .find_map(|block| block.get(REASON).and_then(|i| i.value.clone()))
            .filter(|r| !r.trim().is_empty())
    });
    Ok(Click {
        team,
        user_name: user
            .username
            .or(user.name)
            .unwrap_or_else(|| user.id.clone()),
        user: user.id,
        choice,
        review,
        reason,
        action_ts: action.action_ts,
        response_url: interaction
            .response_url
            .ok_or_else(|| missing("response_url"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REVIEW: &str = "550e8400-e29b-41d4-a716-446655440520";

    fn form(payload: &serde_json::Value) -> Vec<u8> {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("payload", &payload.to_string())
            .finish()
            .into_bytes()
    }

    fn click(action_id: &str, reason: Option<&str>) -> serde_json::Value {
        json!({
            "type": "block_actions",
            "user": {"id": "U024BE7LH", "username": "dana", "team_id": "T9TK3CUKW"},
            "team": {"id": "T9TK3CUKW", "domain": "example"},
            "response_url": "https://hooks.slack.com/actions/T9TK3CUKW/1/abc",
            "actions": [{"action_id": action_id, "block_id": "decide", "value": REVIEW, "type": "button", "action_ts": "1548426417.840180"}],
            "state": {"values": {"why": {REASON: {"type": "plain_text_input", "value": reason}}}},
        })
    }

    #[test]
    fn a_click_on_deny_carries_the_reason_typed_beside_it() {
        let parsed = parse(&form(&click(DENY, Some("Not in the freeze")))).unwrap();
        assert_eq!(parsed.choice, Choice::Deny);
        assert_eq!(parsed.reason.as_deref(), Some("Not in the freeze"));
        assert_eq!(
            (
                parsed.team.as_str(),
                parsed.user.as_str(),
                parsed.user_name.as_str()
            ),
            ("T9TK3CUKW", "U024BE7LH", "dana")
        );
        assert_eq!(parsed.review.to_string(), REVIEW);
        assert_eq!(parsed.action_ts, "1548426417.840180");
        let approve = parse(&form(&click(APPROVE, Some("  ")))).unwrap();
        assert_eq!((approve.choice, approve.reason), (Choice::Approve, None));
    }

    #[test]
    fn what_is_not_a_click_on_countersigns_buttons_is_named() {
        assert_eq!(parse(b"token=x"), Err(NotAClick::NoPayload));
        assert!(matches!(
            parse(&form(&json!("[]"))),
            Err(NotAClick::Malformed(_))
        ));
        assert_eq!(
            parse(&form(&json!({"type": "view_submission"}))),
            Err(NotAClick::OtherKind("view_submission".into()))
        );
        assert_eq!(
            parse(&form(&click("other", None))),
            Err(NotAClick::OtherButton("other".into()))
        );
        let mut bad = click(APPROVE, None);
        bad["actions"][0]["value"] = json!("../etc");
        assert_eq!(
            parse(&form(&bad)),
            Err(NotAClick::BadReview("../etc".into()))
        );
        let mut no_url = click(APPROVE, None);
        no_url.as_object_mut().unwrap().remove("response_url");
        assert!(
            matches!(parse(&form(&no_url)), Err(NotAClick::Malformed(m)) if m.contains("response_url"))
        );
    }
}
