//! One review drawn as text, for reading before the app has loaded: the
//! same elements, classes and words as the app's review page for what was
//! asked (the request, the exact call and its summary's check, the plan,
//! the problems, the history), with the decision left to the app. Nothing in
//! it can decide: it has no form and no button, and the app replaces it.

use super::plan_graph::GraphDrawing;
use super::{counted, shell, Html};
use chrono::{DateTime, Utc};
use countersign_domain::model::{Confirm, ConfirmStatus, Event, Plan};
use countersign_domain::text::markdown::{parse, plain_text, Block, Inline};
use countersign_domain::text::reveal;
use countersign_domain::toolcall::{
    check_summary, default_reason, ApprovalRequest, CallHash, SummaryCheck, ToolCallReview,
};
use countersign_domain::wire::ReviewSummary;
use countersign_domain::{Issue, Review};

/// Above this many bytes agent prose gets its own scrolling region.
const LONG_TEXT_BYTES: usize = 600;

/// A review's page as the desk draws it before its code has loaded.
pub struct ReviewDrawing<'a> {
    review: &'a Review,
    /// The server the review comes from (named in the header).
    server: &'a str,
    /// How many reviews are pending (the header's count).
    pending: u64,
    /// Whether it was opened from a Countersign e-mail's link.
    from_mail: bool,
}

impl<'a> ReviewDrawing<'a> {
    /// The drawing of `review` from the desk's `server`, with `pending`
    /// reviews waiting in all.
    pub fn new(review: &'a Review, server: &'a str, pending: u64) -> Self {
        ReviewDrawing {
            review,
            server,
            pending,
            from_mail: false,
        }
    }

    /// The drawing, saying (when `from_mail`: opened from a Countersign
    /// e-mail's link) that opening the link decided nothing, as the app does.
    pub fn from_mail(self, from_mail: bool) -> Self {
        ReviewDrawing { from_mail, ..self }
    }

    /// The page in the element the boot script shows while the app loads
    /// (marked with the review's id), times said as of `now` and links under
    /// `base`.
    pub fn first_paint(&self, now: DateTime<Utc>, base: &str) -> String {
        let base = &super::escape(base);
        let review = self.review;
        let confirm = &review.confirm;
        let mut html = Html(String::with_capacity(8192));
        html.tag(&format!(
            "<div class=\"first-paint\" data-review=\"{}\">",
            confirm.confirm_id
        ));
        shell(&mut html, base, Some(self.server), self.pending, false);
        html.tag(&format!("<main id=\"main\" tabindex=\"-1\"><article class=\"review\" aria-labelledby=\"review-title\"><p class=\"breadcrumb\"><a href=\"{base}\" aria-keyshortcuts=\"Escape\">← Inbox</a></p>"));
        head(&mut html, review, now);
        let pending = confirm.status == ConfirmStatus::Pending;
        if self.from_mail {
            html.tag("<p class=\"notice\" role=\"note\">")
                .text(mail_notice(pending))
                .tag("</p>");
        }
        html.tag("<div class=\"review-grid\"><div class=\"review-main-col\">");
        if let Some(call) = review.tool_call() {
            tool_call(&mut html, call, pending, now);
        }
        if let Some(plan) = review.plan() {
            plan_card(&mut html, plan);
        }
        let issues = review.validate();
        if !issues.is_empty() {
            html.tag("<section aria-labelledby=\"problems-title\" class=\"card\">")
                .tag(&problems(&issues))
                .tag("</section>");
        }
        html.tag("<section aria-labelledby=\"history-title\" class=\"card\">")
            .tag(&history(review, now))
            .tag("</section>");
        html.tag("</div><aside class=\"review-side-col\" aria-label=\"Decision and details\">");
        decision(&mut html, confirm);
        html.tag("</aside></div></article></main></div>");
        html.0
    }
}

/// The title, status, kind, requester, time and the agent's own reason.
fn head(html: &mut Html, review: &Review, now: DateTime<Utc>) {
    html.tag("<header class=\"review-head\">");
    head_parts(html, review, now);
    html.tag("</header>");
}

/// What a review's head holds ([`head`] without its element), for the app's
/// head, which adds its own notes after it.
pub fn review_head(review: &Review, now: DateTime<Utc>) -> String {
    let mut html = Html(String::new());
    head_parts(&mut html, review, now);
    html.0
}

fn head_parts(html: &mut Html, review: &Review, now: DateTime<Utc>) {
    let confirm = &review.confirm;
    let summary = ReviewSummary::of(review);
    html.tag("<h1 id=\"review-title\">")
        .text(&reveal::prose(&summary.title))
        .tag("</h1><p class=\"review-meta\">");
    status(html, confirm.status);
    html.tag("<span class=\"tag\">")
        .text(&summary.kind.to_string())
        .tag("</span><span>asked by <strong>")
        .text(&reveal::label(&confirm.requested_by_role))
        .tag("</strong></span>");
    time(html, &confirm.requested_at, now);
    html.tag("</p>");
    if let Some(reason) = own_reason(review) {
        long_text(html, "request-reason", "Reason for the request", &reason);
    }
}

/// What an e-mail's link did (nothing) and what deciding here does, for a
/// review opened from one that is still `pending` or not.
pub fn mail_notice(pending: bool) -> &'static str {
    if pending {
        "You opened this from an e-mail. Opening its link decided nothing: decide below, signed in as yourself, and the decision is recorded as made by e-mail."
    } else {
        "You opened this from an e-mail. Opening its link decided nothing, and this request is decided already."
    }
}

/// The request's reason, unless it is the one made for a tool call that
/// gave none (the call and its summary, which the page shows already).
fn own_reason(review: &Review) -> Option<String> {
    let reason = review.confirm.reason.clone()?;
    let made = review.tool_call().and_then(|c| {
        let name = c.request.tool_call().ok()?.name;
        Some(default_reason(&name, &c.request.human_summary))
    });
    (made.as_deref() != Some(reason.as_str())).then_some(reason)
}

/// A status as its badge.
fn status(html: &mut Html, status: ConfirmStatus) {
    html.tag(&format!(
        "<span class=\"status status-{0}\"><span aria-hidden=\"true\">{1}</span> {0}</span>",
        status.as_str(),
        status.symbol()
    ));
}

/// A moment said as "2 hours ago", exact in its title.
fn time(html: &mut Html, at: &countersign_domain::Timestamp, now: DateTime<Utc>) {
    html.tag("<time datetime=\"")
        .text(at.as_str())
        .tag(&format!(
            "\" title=\"{}\">{}</time>",
            at.exact(),
            at.ago(now)
        ));
}

/// A paragraph of agent prose, scrolling on its own once it is long.
fn long_text(html: &mut Html, class: &str, label: &str, text: &str) {
    let region = if text.len() > LONG_TEXT_BYTES {
        format!(" role=\"region\" aria-label=\"{label}\" tabindex=\"0\"")
    } else {
        String::new()
    };
    html.tag(&format!("<p class=\"long-text {class}\"{region}>"))
        .text(&reveal::prose(text))
        .tag("</p>");
}

/// The tool call as a reviewer must see it: the exact call and its hash,
/// the summary checked against it, the risk, the time left, side effects,
/// rollback notes, diff, alternatives and where it comes from.
fn tool_call(html: &mut Html, call: &ToolCallReview, pending: bool, now: DateTime<Utc>) {
    let request = &call.request;
    let name = request.tool_call().map(|c| c.name).unwrap_or_default();
    html.tag("<section class=\"card tool-call\" aria-labelledby=\"call-title\"><h2 id=\"call-title\">Tool call <code>")
        .text(&reveal::label(&name))
        .tag("</code></h2><p class=\"tool-risk\">")
        .tag(&call_risk(request))
        .tag("</p>");
    if pending {
        html.tag("<p class=\"countdown\" role=\"timer\" aria-live=\"off\">")
            .text(&countdown(request, now))
            .tag("</p>");
    }
    html.tag("<div class=\"exact-call\">")
        .tag(&exact_call(request, CheckedBy::Server))
        .tag("</div><div class=\"agent-summary\">")
        .tag(&agent_summary(request))
        .tag("</div><div class=\"call-notes\">")
        .tag(&call_notes(request))
        .tag("</div><dl class=\"fields\">")
        .tag(&call_fields(request))
        .tag("</dl></section>");
}

/// The call's risk tier, what it means and why: the inside of the tool call
/// card's `<p class="tool-risk">`, here and in the app.
pub fn call_risk(request: &ApprovalRequest) -> String {
    let tier = request.risk_tier.to_string();
    let mut html = Html(format!(
        "<span class=\"risk risk-{}\">Risk {tier}</span> <span class=\"risk-meaning\">{}</span>",
        tier.to_ascii_lowercase(),
        request.risk_tier.meaning()
    ));
    if !request.risk_reasons.is_empty() {
        html.text(&format!(". Why: {}.", request.risk_reasons.join("; ")));
    }
    html.0
}

/// What the agent predicts and offers: side effects, rollback notes, the
/// diff and alternatives, each when given: the inside of the tool call
/// card's `<div class="call-notes">`, here and in the app.
pub fn call_notes(request: &ApprovalRequest) -> String {
    let mut html = Html(String::new());
    list(&mut html, "Predicted side effects", &request.side_effects);
    list(
        &mut html,
        "Rollback and safety notes",
        &request.rollback_notes,
    );
    if let Some(diff) = &request.diff {
        html.tag("<h3>Diff</h3><pre class=\"diff\"><code>")
            .text(diff)
            .tag("</code></pre>");
    }
    list(
        &mut html,
        "Suggested alternatives",
        &request.suggested_alternatives,
    );
    html.0
}

/// Where the call comes from (session, run, workspace, device): what a
/// scoped approval covers. The inside of the tool call card's `<dl
/// class="fields">`, here and in the app.
pub fn call_fields(request: &ApprovalRequest) -> String {
    let mut html = Html(String::with_capacity(256));
    html.tag("<dt>Session</dt><dd><code>")
        .text(&reveal::label(&request.session_id))
        .tag("</code></dd><dt>Run</dt><dd><code>")
        .text(&reveal::label(&request.run_id))
        .tag("</code></dd>");
    for (term, value) in [
        ("Workspace", &request.workspace),
        ("Device", &request.client_device_id),
    ] {
        if let Some(value) = value {
            html.tag(&format!("<dt>{term}</dt><dd><code>"))
                .text(&reveal::label(value))
                .tag("</code></dd>");
        }
    }
    html.0
}

/// What the request's countdown says at `now`.
pub fn countdown(request: &ApprovalRequest, now: DateTime<Utc>) -> String {
    let at = request.expires_at.exact();
    match (request.expires_at.to_utc() - now).num_seconds() {
        s if s > 0 => format!(
            "Expires in {} (at {at}): after that it is denied by default.",
            duration(s)
        ),
        _ => format!("Expired at {at}: it can no longer be approved."),
    }
}

/// "4 min 05 s" for a positive number of seconds.
fn duration(seconds: i64) -> String {
    match seconds {
        s if s >= 3600 => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
        s if s >= 60 => format!("{} min {:02} s", s / 60, s % 60),
        s => format!("{s} s"),
    }
}

/// The canonical call pretty-printed for reading (the canonical text itself
/// when it does not parse).
pub fn pretty(canonical: &str) -> String {
    serde_json::from_str::<serde_json::Value>(canonical)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|_| canonical.to_owned())
}

/// Where a call's hash was recomputed, as the page says it.
#[derive(Clone, Copy)]
pub enum CheckedBy {
    /// The server that drew the page.
    Server,
    /// The app, in the reviewer's browser.
    Browser,
}

/// The exact call pretty-printed and its hash, recomputed here (`by`): the
/// inside of the tool call card's `<div class="exact-call">`.
pub fn exact_call(request: &ApprovalRequest, by: CheckedBy) -> String {
    let hash_ok = CallHash::of_canonical(&request.tool_call_canonical) == request.tool_call_hash;
    let mut html = Html(String::with_capacity(
        request.tool_call_canonical.len() * 2 + 256,
    ));
    html.tag("<h3>Exact call</h3><pre class=\"call-json\" aria-label=\"Exact call (canonical JSON)\"><code>")
        .text(&reveal::json(&pretty(&request.tool_call_canonical)))
        .tag("</code></pre><p class=\"subtle call-hash\">SHA-256 <code>")
        .text(&request.tool_call_hash.to_string())
        .tag(match (hash_ok, by) {
            (true, CheckedBy::Server) => "</code> ✓ recomputed by the server</p>",
            (true, CheckedBy::Browser) => "</code> ✓ recomputed in this browser</p>",
            (false, _) => "</code> ✕ does NOT match the call</p>",
        });
    html.0
}

/// What the agent says the call does, and its check against the call: the
/// inside of the tool call card's `<div class="agent-summary">`, here and in
/// the app's review page.
pub fn agent_summary(request: &ApprovalRequest) -> String {
    let mut html = Html(String::with_capacity(512));
    let summary = request.human_summary.trim();
    if !summary.contains('\n') && plain_text(summary).trim() == summary {
        html.tag("<h3>Does the summary match the call?</h3>");
    } else {
        html.tag("<h3>Agent’s summary</h3><blockquote class=\"summary\">");
        markdown(&mut html, &reveal::prose(&request.human_summary));
        html.tag("</blockquote>");
    }
    match request.tool_call() {
        Ok(call) => summary_check(&mut html, &check_summary(&request.human_summary, &call)),
        Err(_) => {
            html.tag("<p class=\"summary-check summary-bad\" role=\"alert\">✕ The call cannot be read, so the summary cannot be checked.</p>");
        }
    }
    html.0
}

/// The summary's check: red when it names what the call does not carry.
fn summary_check(html: &mut Html, check: &SummaryCheck) {
    if check.contradicts() {
        html.tag("<div class=\"summary-check summary-bad\" role=\"alert\"><p><strong>✕ The summary contradicts the exact call.</strong> It names what the call does not carry; decide on the call above, not on the summary:</p><ul>");
        for c in &check.contradictions {
            html.tag("<li><code>")
                .text(&reveal::label(c))
                .tag("</code></li>");
        }
        html.tag("</ul></div>");
    }
    if !check.is_complete() {
        html.tag(
            "<div class=\"summary-check summary-note\"><p>The summary does not mention:</p><ul>",
        );
        if !check.names_tool {
            html.tag("<li>the tool’s name</li>");
        }
        for u in &check.unmentioned {
            html.tag("<li><code>")
                .text(&reveal::label(&u.path))
                .tag("</code> = <code>")
                .text(&reveal::label(&u.value))
                .tag("</code></li>");
        }
        html.tag("</ul></div>");
    }
    if !check.contradicts() && check.is_complete() {
        html.tag("<p class=\"summary-check summary-ok\">✓ Checked: the summary names the tool and every argument value of the exact call.</p>");
    }
}

/// Markdown as inert elements (never HTML parsed from the text).
fn markdown(html: &mut Html, text: &str) {
    for block in parse(text) {
        match block {
            Block::Paragraph(runs) => wrap(html, "p", &runs),
            Block::Heading(runs) => {
                html.tag("<p>");
                wrap(html, "strong", &runs);
                html.tag("</p>");
            }
            Block::List { ordered, items } => {
                let tag = if ordered { "ol" } else { "ul" };
                html.tag(&format!("<{tag}>"));
                for item in &items {
                    wrap(html, "li", item);
                }
                html.tag(&format!("</{tag}>"));
            }
            Block::Code(code) => {
                html.tag("<pre><code>").text(&code).tag("</code></pre>");
            }
        }
    }
}

/// `runs` inside a `tag` element.
fn wrap(html: &mut Html, tag: &str, runs: &[Inline]) {
    html.tag(&format!("<{tag}>"));
    for run in runs {
        let (element, text) = match run {
            Inline::Text(t) => (None, t),
            Inline::Code(t) => (Some("code"), t),
            Inline::Strong(t) => (Some("strong"), t),
            Inline::Emphasis(t) => (Some("em"), t),
        };
        match element {
            Some(e) => html
                .tag(&format!("<{e}>"))
                .text(text)
                .tag(&format!("</{e}>")),
            None => html.text(text),
        };
    }
    html.tag(&format!("</{tag}>"));
}

/// A titled list, when it has items.
fn list(html: &mut Html, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    html.tag(&format!("<h3>{title}</h3><ul class=\"plain-list\">"));
    for item in items {
        html.tag("<li>").text(item).tag("</li>");
    }
    html.tag("</ul>");
}

/// Plans of up to this many steps are drawn as their graph before the app
/// has loaded; larger ones as a list of steps (the graph's markup grows by
/// about 640 bytes a step, and a phone's link carries it before the app).
const STILL_GRAPH_STEPS: usize = 100;

/// The plan's title, status, objective and graph (the app's, without its
/// zoom and step details), or for a large plan its steps in a list.
fn plan_card(html: &mut Html, plan: &Plan) {
    html.tag("<section aria-labelledby=\"plan-title\" class=\"card\">");
    plan_head_parts(html, plan);
    if plan.steps.len() <= STILL_GRAPH_STEPS {
        html.tag(&GraphDrawing::of(plan).still(plan))
            .tag("</section>");
        return;
    }
    html.tag(&format!(
        "<p class=\"subtle\">{}; the graph is drawn once the desk has loaded.</p><ol class=\"plain-list plan-steps\">",
        counted(plan.steps.len(), "step")
    ));
    for step in &plan.steps {
        html.tag(&format!(
            "<li><span class=\"subtle\">{}</span> ",
            step.status.words()
        ))
        .text(&reveal::prose(&step.description))
        .tag("</li>");
    }
    html.tag("</ol></section>");
}

/// Every MPLP check the request or its target fails: the inside of the
/// problems card (shown only when some do), here and in the app.
pub fn problems(issues: &[Issue]) -> String {
    let mut html = Html(String::with_capacity(256));
    html.tag(&format!("<h2 id=\"problems-title\">Problems <span class=\"count\">{}</span></h2><ul class=\"issues\" aria-label=\"Validation problems\">", issues.len()));
    for issue in issues {
        html.tag("<li><code class=\"issue-path\">")
            .text(&issue.path)
            .tag("</code><span class=\"issue-message\">")
            .text(&issue.message)
            .tag("</span><span class=\"issue-code subtle\">")
            .text(issue.code.as_str())
            .tag("</span></li>");
    }
    html.tag("</ul>");
    html.0
}

/// The decisions, oldest first, with who made them and where (the
/// signed-in person, else the key's owner, else the key; the desk, the API,
/// Slack or e-mail), then the events: the inside of the history card, here
/// and in the app, times said as of `now`.
pub fn history(review: &Review, now: DateTime<Utc>) -> String {
    let confirm = &review.confirm;
    let mut html = Html(String::with_capacity(1024));
    html.tag("<h2 id=\"history-title\">Decision history</h2>");
    let decisions = confirm.decisions();
    if decisions.is_empty() {
        html.tag("<p class=\"subtle\">No decision yet.</p>");
    } else {
        html.tag("<ol class=\"timeline\" aria-label=\"Decision history\">");
        for d in decisions {
            let decider = review
                .deciders
                .iter()
                .find(|k| k.decision_id == d.decision_id);
            html.tag(&format!("<li class=\"timeline-item decision-{0}\"><p class=\"timeline-head\"><strong>{0}</strong> by <span class=\"role\">", d.status.as_str()))
                .text(&reveal::label(&d.decided_by_role))
                .tag("</span>");
            if let Some(k) = decider {
                html.text(&format!(" ({})", reveal::label(k.key_ref().person())));
                if let Some(channel) = k.channel {
                    html.text(&format!(" {}", channel.phrase()));
                }
            }
            html.tag(" · ");
            time(&mut html, &d.decided_at, now);
            html.tag("</p>");
            if let Some(reason) = &d.reason {
                html.tag("<p class=\"timeline-reason\">")
                    .text(&reveal::prose(reason))
                    .tag("</p>");
            }
            html.tag("</li>");
        }
        html.tag("</ol>");
    }
    html.tag("<h3>Events</h3>");
    events(&mut html, review);
    html.0
}

/// The events of the confirm and its plan, oldest first.
fn events(html: &mut Html, review: &Review) {
    let mut events: Vec<&Event> = review.confirm.events.iter().flatten().collect();
    events.extend(
        review
            .plan()
            .into_iter()
            .flat_map(|p| p.events.iter().flatten()),
    );
    events.sort_by(|a, b| a.timestamp.cmp(&b.timestamp));
    if events.is_empty() {
        html.tag("<p class=\"subtle\">No events.</p>");
        return;
    }
    html.tag("<table class=\"events\"><thead><tr><th scope=\"col\">Event</th><th scope=\"col\">Source</th><th scope=\"col\">Time</th></tr></thead><tbody>");
    for e in events {
        html.tag("<tr><td><code>")
            .text(e.event_type.as_str())
            .tag("</code></td><td>")
            .text(&e.source)
            .tag("</td><td><time datetime=\"")
            .text(e.timestamp.as_str())
            .tag("\">")
            .text(&e.timestamp.exact())
            .tag("</time></td></tr>");
    }
    html.tag("</tbody></table>");
}

/// The plan card's heading, the plan's title and status, and its objective,
/// for the app's card, which adds the interactive graph after them.
pub fn plan_head(plan: &Plan) -> String {
    let mut html = Html(String::new());
    plan_head_parts(&mut html, plan);
    html.0
}

fn plan_head_parts(html: &mut Html, plan: &Plan) {
    html.tag("<h2 id=\"plan-title\">Plan</h2><p class=\"plan-title\"><strong>")
        .text(&reveal::prose(&plan.title))
        .tag(&format!(
            "</strong> <span class=\"status plan-status-{}\">{}</span></p>",
            plan.status.as_str(),
            plan.status.as_str().replace('_', " ")
        ));
    long_text(html, "plan-objective", "Plan objective", &plan.objective);
}

/// Where the decision goes: said to come with the app while the request is
/// pending (nothing here decides), or how it was decided.
fn decision(html: &mut Html, confirm: &Confirm) {
    if confirm.status == ConfirmStatus::Pending {
        html.tag("<section class=\"card deciding\" aria-labelledby=\"deciding-title\"><h2 id=\"deciding-title\">Your decision</h2><p class=\"subtle\" role=\"status\">The decision form is loading…</p></section>");
        return;
    }
    html.tag("<section class=\"card decided\" role=\"status\"><h2>Decided</h2><p>");
    decided_parts(html, confirm);
    html.tag("</p></section>");
}

/// How a decided request ended: its status, by whom and when.
pub fn decided(confirm: &Confirm) -> String {
    let mut html = Html(String::new());
    decided_parts(&mut html, confirm);
    html.0
}

fn decided_parts(html: &mut Html, confirm: &Confirm) {
    status(html, confirm.status);
    if let Some(d) = confirm.last_decision() {
        html.text(&format!(
            " by {} · {}",
            reveal::label(&d.decided_by_role),
            d.decided_at.exact()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::escape;
    use countersign_domain::Timestamp;

    fn now() -> DateTime<Utc> {
        Timestamp::parse("2026-11-26T12:00:00Z").unwrap().to_utc()
    }

    fn demo(pick: impl Fn(&Review) -> bool) -> Review {
        let reviews = countersign_domain::demo::reviews(now()).unwrap();
        reviews.into_iter().find(|r| pick(r)).unwrap()
    }

    fn pending_call() -> Review {
        demo(|r| r.tool_call().is_some() && r.confirm.status == ConfirmStatus::Pending)
    }

    /// `review` with its JSON changed by `edit` (as an agent could have sent it).
    fn edited(review: &Review, edit: impl Fn(&mut serde_json::Value)) -> Review {
        let mut json = serde_json::to_value(review).unwrap();
        edit(&mut json);
        serde_json::from_value(json).unwrap()
    }

    fn drawn(review: &Review) -> String {
        ReviewDrawing::new(review, "https://desk.example", 7).first_paint(now(), "/")
    }

    #[test]
    fn a_tool_call_is_drawn_with_its_exact_call_its_hash_and_its_summarys_check() {
        let review = pending_call();
        let html = drawn(&review);
        let request = &review.tool_call().unwrap().request;
        assert!(html.starts_with(&format!(
            "<div class=\"first-paint\" data-review=\"{}\">",
            review.confirm.confirm_id
        )));
        assert!(html.contains("<h2 id=\"call-title\">Tool call <code>"));
        assert!(html.contains(&escape(&reveal::json(&pretty(
            &request.tool_call_canonical
        )))));
        assert!(html.contains(&format!(
            "{}</code> ✓ recomputed by the server",
            request.tool_call_hash
        )));
        assert!(html.contains("class=\"summary-check"));
        assert!(html.contains("class=\"countdown\""));
        assert!(html.contains("<span class=\"count\" aria-label=\"7 pending\">7</span>"));
    }

    /// The app sets these pieces where the drawing has them: the same markup.
    #[test]
    fn the_apps_head_plan_head_and_decided_line_are_the_drawings_own() {
        let review = demo(|r| r.plan().is_some() && r.confirm.status != ConfirmStatus::Pending);
        let html = drawn(&review);
        let head = review_head(&review, now());
        assert!(head.starts_with("<h1 id=\"review-title\">"));
        assert!(html.contains(&format!("<header class=\"review-head\">{head}</header>")));
        let plan = plan_head(review.plan().unwrap());
        assert!(plan.contains("<p class=\"long-text plan-objective\">"));
        assert!(html.contains(&format!(
            "<section aria-labelledby=\"plan-title\" class=\"card\">{plan}"
        )));
        let line = decided(&review.confirm);
        assert!(line.contains(" by "), "{line}");
        assert!(html.contains(&format!("<h2>Decided</h2><p>{line}</p>")));
    }

    #[test]
    fn nothing_drawn_can_decide_the_form_comes_with_the_app() {
        let html = drawn(&pending_call());
        let article = &html[html.find("<main").unwrap()..];
        for control in ["<button", "<form", "<input", "<select", "<textarea"] {
            assert!(!article.contains(control), "{control} in {article}");
        }
        assert!(article.contains("The decision form is loading…"));
    }

    #[test]
    fn a_summary_that_names_what_the_call_does_not_carry_is_an_alert() {
        let review = edited(&pending_call(), |json| {
            let request = json.pointer_mut("/target/tool_call/request").unwrap();
            request["humanSummary"] = "Wire 99,000 EUR to evil@example.com".into();
        });
        let html = drawn(&review);
        assert!(html.contains("<div class=\"summary-check summary-bad\" role=\"alert\"><p><strong>✕ The summary contradicts the exact call.</strong>"));
    }

    #[test]
    fn text_from_the_agent_cannot_become_markup() {
        let review = edited(&pending_call(), |json| {
            json["confirm"]["requested_by_role"] = "<img src=x onerror=alert(1)>".into();
            json["confirm"]["reason"] = "<script>alert(1)</script>\u{202e}txt.exe".into();
        });
        let html = drawn(&review);
        assert!(!html.contains("<img") && !html.contains("<script"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;[U+202E]txt.exe"));
    }

    #[test]
    fn a_plan_is_drawn_as_its_graph_with_its_problems() {
        let review = demo(|r| r.plan().is_some() && !r.validate().is_empty());
        let html = drawn(&review);
        let plan = review.plan().unwrap();
        assert!(html.contains(&format!(
            "<svg role=\"group\" aria-label=\"Plan graph: {} steps\"",
            plan.steps.len()
        )));
        for (i, step) in plan.steps.iter().enumerate() {
            let about = format!("<desc id=\"dag-step-{i}-about\">Step {}: ", i + 1);
            let at = html.find(&about).expect("each step is in the graph");
            assert!(html[at..].starts_with(&format!(
                "{about}{}",
                escape(&reveal::prose(&step.description))
            )));
        }
        // Read, not pressed: the app's nodes are buttons, the drawing's are not.
        assert!(!html.contains("role=\"button\"") && !html.contains("tabindex=\"0\""));
        assert!(html.contains(&format!(
            "<h2 id=\"problems-title\">Problems <span class=\"count\">{}</span></h2>",
            review.validate().len()
        )));
    }

    #[test]
    fn a_large_plan_is_drawn_as_a_list_of_its_steps() {
        let review = edited(&demo(|r| r.plan().is_some()), |json| {
            let plan = &mut json["target"]["plan"];
            let step = plan["steps"][0].clone();
            plan["steps"] = (0..=STILL_GRAPH_STEPS)
                .map(|n| {
                    let mut step = step.clone();
                    step["step_id"] = format!("00000000-0000-4000-8000-{n:012}").into();
                    step["description"] = format!("Step number {n}").into();
                    step["dependencies"] = serde_json::json!([]);
                    step
                })
                .collect();
        });
        let html = drawn(&review);
        assert!(html.contains(&format!(
            "<p class=\"subtle\">{} steps; the graph is drawn once the desk has loaded.</p>",
            STILL_GRAPH_STEPS + 1
        )));
        assert!(html.contains("Step number 100</li>") && !html.contains("<svg"));
    }

    #[test]
    fn a_decided_review_says_how_and_its_history_who() {
        let review = demo(|r| r.confirm.status == ConfirmStatus::Approved);
        let html = drawn(&review);
        assert!(html.contains("<section class=\"card decided\" role=\"status\"><h2>Decided</h2><p><span class=\"status status-approved\">"));
        assert!(html.contains("<li class=\"timeline-item decision-approved\">"));
        assert!(!html.contains("The decision form is loading"));
    }

    #[test]
    fn a_review_opened_from_an_e_mail_says_the_link_decided_nothing() {
        let review = pending_call();
        let html = ReviewDrawing::new(&review, "https://desk.example", 1)
            .from_mail(true)
            .first_paint(now(), "/");
        let notice = format!(
            "</header><p class=\"notice\" role=\"note\">{}</p>",
            escape(mail_notice(true))
        );
        assert!(html.contains(&notice), "{html}");
        assert!(!drawn(&review).contains("You opened this from an e-mail"));
    }

    #[test]
    fn links_stay_under_the_base() {
        let html = ReviewDrawing::new(&pending_call(), "https://desk.example", 0)
            .first_paint(now(), "/countersign/");
        for href in html.split("href=\"").skip(1) {
            assert!(
                href.starts_with("/countersign/") || href.starts_with("#main"),
                "{href}"
            );
        }
    }
}
