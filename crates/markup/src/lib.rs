//! The desk's HTML written as text, escaped as it is written.
//!
//! - [`review_rows`]: the rows of a page of reviews. The app's inbox sets them
//!   as its list's HTML in one step (a page of 50 rows built node by node cost
//!   the first render more than everything else on the screen).
//! - [`Inbox`]: the whole first page of pending reviews with its shell, at the
//!   inbox's defaults (pending, what expires first), drawn by the first paint before
//!   the app has loaded with the same elements, classes and text as the app's
//!   components, so the app replaces it without anything moving. The browser
//!   tests compare the two. [`Inbox::first_paint`] is what the first paint
//!   draws: the wasm module of `countersign-first-paint` writes it from a
//!   server's answer, the local inbox's stored head or the demo, and
//!   `countersign serve` writes it for a desk it serves itself (`GET
//!   /api/v1/inbox`), with no code to fetch first.
//! - [`ReviewDrawing`]: one review for reading while the app loads, drawn by
//!   `countersign serve` (`GET /api/v1/reviews/{id}/page`) with the classes
//!   and words of the app's review page, and nothing that decides.
//! - [`plan_graph`]: a plan's DAG as SVG, in the app's plan graph and (still)
//!   in the server's drawing of a plan's review.

use chrono::{DateTime, Utc};
pub mod plan_graph;
mod review;

pub use review::{
    agent_summary, call_fields, call_notes, call_risk, countdown, decided, exact_call, history,
    mail_notice, plan_head, pretty, problems, review_head, CheckedBy, ReviewDrawing,
};

use countersign_domain::langgraph::ThreadStatus;
use countersign_domain::model::{ConfirmStatus, TargetType};
use countersign_domain::text::reveal;
use countersign_domain::wire::{
    CallKey, InboxHead, Order, ReviewSummary, StatusCounts, SummaryPage, PAGE_SIZE,
};

/// HTML being written: text and attribute values are escaped as they go in.
struct Html(String);

impl Html {
    fn tag(&mut self, markup: &str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    fn text(&mut self, text: &str) -> &mut Self {
        escape_into(&mut self.0, text);
        self
    }
}

/// `text` made safe inside HTML or SVG text and attribute values (quoted
/// either way): it can only ever be text. The one escaper of the app's markup.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// The first page of pending reviews and what frames it.
pub struct Inbox<'a> {
    /// The page's rows, what expires first on top (the inbox's default order).
    page: Vec<&'a ReviewSummary>,
    /// How many reviews have each status (every review, not only this page).
    counts: StatusCounts,
    /// The requester filter's choices, each once, in order.
    requesters: Vec<&'a str>,
    /// Whether a page follows this one.
    more: bool,
    /// The server the reviews come from (named in the header), if any.
    server: Option<&'a str>,
}

impl<'a> Inbox<'a> {
    /// The inbox of `summaries` (every review this browser holds); `None`
    /// when none is pending (the app says why the inbox is empty).
    pub fn of(summaries: &'a [ReviewSummary]) -> Option<Self> {
        let mut pending: Vec<&ReviewSummary> = summaries
            .iter()
            .filter(|s| s.status == ConfirmStatus::Pending)
            .collect();
        pending.sort_by(|a, b| Order::Expiring.compare(a, b));
        let more = pending.len() > PAGE_SIZE;
        pending.truncate(PAGE_SIZE);
        let mut counts = StatusCounts::default();
        for summary in summaries {
            counts.add(summary.status);
        }
        Self::framed(pending, counts, known_requesters(summaries), more, None)
    }

    /// The inbox of a server's first page of pending reviews, as the server
    /// at `server` answered it; `None` when the page is empty.
    pub fn served(answer: &'a SummaryPage, server: &'a str) -> Option<Self> {
        let page: Vec<&ReviewSummary> = answer.items.iter().take(PAGE_SIZE).collect();
        let more = answer.next_cursor.is_some();
        let requesters = known_requesters(&answer.items);
        Self::framed(page, answer.counts, requesters, more, Some(server))
    }

    /// The inbox of a head stored beside the local inbox's index (the
    /// app's default page as it last showed it); `None` when no review is
    /// pending.
    pub fn head(head: &'a InboxHead) -> Option<Self> {
        let page: Vec<&ReviewSummary> = head.pending.iter().take(PAGE_SIZE).collect();
        let more = head.counts.pending > page.len() as u64;
        let requesters = head.requesters.iter().map(String::as_str).collect();
        Self::framed(page, head.counts, requesters, more, None)
    }

    fn framed(
        page: Vec<&'a ReviewSummary>,
        counts: StatusCounts,
        requesters: Vec<&'a str>,
        more: bool,
        server: Option<&'a str>,
    ) -> Option<Self> {
        if page.is_empty() {
            return None;
        }
        Some(Inbox {
            page,
            counts,
            requesters,
            more,
            server,
        })
    }

    /// The shell and the inbox, with times said as of `now` and links under
    /// `base` (the path the app is served under: `/` or e.g. `/countersign/`).
    pub fn html(&self, now: DateTime<Utc>, base: &str) -> String {
        let base = &escape(base);
        let mut html = Html(String::with_capacity(4096 + 800 * self.page.len()));
        shell(&mut html, base, self.server, self.counts.pending, true);
        html.tag("<main id=\"main\" tabindex=\"-1\"><section class=\"inbox\" aria-labelledby=\"inbox-title\"><div class=\"page-head\"><h1 id=\"inbox-title\">Inbox</h1><p class=\"subtle\">Requests from agents waiting for a human decision.</p></div>");
        self.tabs(&mut html);
        self.filters(&mut html);
        // Where the app says what a group's decision did (empty until then).
        html.tag("<p class=\"subtle group-result\" role=\"status\"></p>");
        call_groups(&mut html, &self.page, base);
        html.tag("<ol class=\"review-list\" aria-label=\"Reviews\">");
        for (n, summary) in self.page.iter().enumerate() {
            row(&mut html, summary, RowMarks::default(), now, base, n == 0);
        }
        html.tag("</ol>");
        self.pager(&mut html);
        html.tag("</section></main>");
        html.0
    }

    /// The first paint: [`Inbox::html`] in the element that the desk's boot
    /// script puts at the top of the page while the app loads, and that the app
    /// removes once it draws the screen itself.
    pub fn first_paint(&self, now: DateTime<Utc>, base: &str) -> String {
        format!("<div class=\"first-paint\">{}</div>", self.html(now, base))
    }

    /// Until when what [`Inbox::html`] writes as of `now` stays true: each
    /// row says when it was asked and when it expires in words ("2 hours
    /// ago", "expires in 5 minutes"), which hold until the instant returned.
    pub fn holds_until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        self.page
            .iter()
            .flat_map(|summary| {
                let deadline = match summary.status {
                    ConfirmStatus::Pending => summary.expires.as_ref(),
                    _ => None,
                };
                let asked = summary.at.ago_holds_until(now);
                [Some(asked), deadline.map(|d| d.deadline_holds_until(now))]
            })
            .flatten()
            .min()
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The status tabs with their counts, Pending pressed.
    fn tabs(&self, html: &mut Html) {
        html.tag("<div class=\"tabs\" role=\"group\" aria-label=\"Status\">");
        for (label, status) in [
            ("Pending", Some(ConfirmStatus::Pending)),
            ("Approved", Some(ConfirmStatus::Approved)),
            ("Rejected", Some(ConfirmStatus::Rejected)),
            ("Cancelled", Some(ConfirmStatus::Cancelled)),
            ("All", None),
        ] {
            let n = status.map_or(self.counts.total(), |s| self.counts.of(s));
            let pressed = status == Some(ConfirmStatus::Pending);
            html.tag(&format!("<button class=\"tab\" type=\"button\" aria-pressed=\"{pressed}\">{label}<span class=\"count\">{n}</span></button>"));
        }
        html.tag("</div>");
    }

    /// The search box and the type, requester and order pickers, all at "any".
    fn filters(&self, html: &mut Html) {
        html.tag("<div class=\"filters\"><label class=\"search\"><span class=\"visually-hidden\">Search reviews</span><input id=\"search\" type=\"search\" placeholder=\"Search title, reason, requester…  ( / )\"></label><label>Type <select><option value=\"\">Any</option>");
        for t in TargetType::ALL {
            html.tag(&format!("<option value=\"{0}\">{0}</option>", t.as_str()));
        }
        html.tag("</select></label><label>Requester <select><option value=\"\">Anyone</option>");
        for role in &self.requesters {
            html.tag("<option value=\"")
                .text(role)
                .tag("\">")
                .text(role)
                .tag("</option>");
        }
        html.tag("</select></label><label>Order <select>");
        for order in Order::ALL {
            html.tag(&format!(
                "<option value=\"{}\">{}</option>",
                order.as_str(),
                order.label()
            ));
        }
        html.tag("</select></label></div>");
    }

    /// Where this page stands among the pending reviews, and the page buttons.
    fn pager(&self, html: &mut Html) {
        let (shown, total) = (self.page.len(), self.counts.pending);
        let next = if self.more { "" } else { " disabled=\"\"" };
        html.tag(&format!("<nav class=\"pager\" aria-label=\"Pages\"><span>1–{shown} of {total}</span><button type=\"button\" disabled=\"\">Previous</button><button type=\"button\"{next}>Next</button></nav>"));
    }
}

/// The skip link, the header with the server's link state (when the desk
/// is on `server`) and the navigation with the `pending` count (the Inbox
/// marked as the current page when `at_inbox`), and the notices region.
fn shell(html: &mut Html, base: &str, server: Option<&str>, pending: u64, at_inbox: bool) {
    html.tag(&format!("<a class=\"skip-link\" href=\"#main\">Skip to content</a><header class=\"topbar\"><a class=\"brand\" href=\"{base}\"><span class=\"brand-mark\" aria-hidden=\"true\">✓</span>Countersign</a>"));
    if let Some(url) = server {
        html.tag("<span class=\"link-state\" role=\"status\" title=\"")
            .text(url)
            .tag("\" data-state=\"connecting\">Connecting…</span>");
    }
    let current = if at_inbox {
        " aria-current=\"page\""
    } else {
        ""
    };
    html.tag(&format!("<nav aria-label=\"Main\"><a href=\"{base}\"{current}>Inbox <span class=\"count\" aria-label=\""))
        .tag(&format!("{pending} pending\">{pending}</span></a>"))
        .tag(&format!("<a href=\"{base}grants\">Grants</a><a href=\"{base}import\">Import</a><a href=\"{base}settings\">Settings</a></nav><button class=\"help-button\" type=\"button\" aria-label=\"Keyboard shortcuts\" aria-keyshortcuts=\"?\">?</button></header><div class=\"notices\" role=\"region\" aria-label=\"Notices\"></div>"));
}

/// The roles that asked for `known`, each once, in order.
fn known_requesters(known: &[ReviewSummary]) -> Vec<&str> {
    let mut requesters: Vec<&str> = known.iter().map(|s| s.by.as_str()).collect();
    requesters.sort_unstable();
    requesters.dedup();
    requesters
}

/// Pending calls of the same tool in the same session, two or more, each
/// group in the order of its oldest call.
fn call_groups(html: &mut Html, page: &[&ReviewSummary], base: &str) {
    let mut groups: Vec<(&str, &str, Vec<&ReviewSummary>)> = Vec::new();
    for summary in page {
        let Some(CallKey {
            tool: name,
            session,
        }) = &summary.call
        else {
            continue;
        };
        match groups
            .iter_mut()
            .find(|(n, s, _)| n == name && s == session)
        {
            Some((_, _, members)) => members.push(summary),
            None => groups.push((name, session, vec![summary])),
        }
    }
    groups.retain(|(_, _, members)| members.len() > 1);
    if groups.is_empty() {
        return;
    }
    html.tag("<ul class=\"call-groups\" aria-label=\"Similar pending calls\">");
    for (name, session, members) in groups {
        let n = members.len();
        html.tag("<li class=\"call-group card\" aria-label=\"")
            .text(&format!("{n} similar calls: {name} in session {session}"))
            .tag(&format!("\"><p><strong>{n} × <code>"))
            .text(name)
            .tag("</code></strong> in session ")
            .text(session)
            .tag("</p><ul class=\"plain-list\">");
        for member in members {
            html.tag(&format!("<li><a href=\"{base}reviews/{}\">", member.id))
                .text(&member.title)
                .tag("</a></li>");
        }
        let id = format!("group-reason-{name}-{session}");
        html.tag(&format!("</ul><div class=\"actions\"><button class=\"button-approve\" type=\"button\">Approve each once ({n})</button><label class=\"visually-hidden\" for=\""))
            .text(&id)
            .tag("\">Reason to deny the group</label><input id=\"")
            .text(&id)
            .tag(&format!("\" type=\"text\" placeholder=\"Reason to deny\"><button class=\"button-reject\" type=\"button\">Deny each ({n})</button></div></li>"));
    }
    html.tag("</ul>");
}

/// What a row says besides its review's summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowMarks {
    /// How many validation problems the review has, when it has any.
    pub problems: Option<usize>,
    /// Whether a decision on it waits in the outbox for the server.
    pub queued: bool,
    /// Its LangGraph thread's status, when the thread is not simply waiting.
    pub thread: Option<ThreadStatus>,
}

/// The `<li>` rows of `rows`, with times said as of `now` and links under
/// `base`.
pub fn review_rows<'a>(
    rows: impl IntoIterator<Item = (&'a ReviewSummary, RowMarks)>,
    now: DateTime<Utc>,
    base: &str,
) -> String {
    let base = &escape(base);
    let mut html = Html(String::with_capacity(800 * PAGE_SIZE));
    for (n, (summary, marks)) in rows.into_iter().enumerate() {
        row(&mut html, summary, marks, now, base, n == 0);
    }
    html.0
}

/// The Element Timing name of a page's first row (on its title): the browser
/// reports when that row is on screen, which the boot script waits for before
/// it fetches the app, and which the benchmarks count as the inbox shown.
pub const FIRST_ROW_TIMING: &str = "inbox-row";

/// One review's row: a link to it with its tag, title and badges, then its
/// status, requester, time, steps and decisions. The page's `first` row is
/// named for the Element Timing API.
fn row(
    html: &mut Html,
    summary: &ReviewSummary,
    marks: RowMarks,
    now: DateTime<Utc>,
    base: &str,
    first: bool,
) {
    let timing = if first {
        format!(" elementtiming=\"{FIRST_ROW_TIMING}\"")
    } else {
        String::new()
    };
    html.tag(&format!("<li class=\"review-row\"><a class=\"review-link\" href=\"{base}reviews/{}\"><span class=\"review-main\"><span class=\"tag\">", summary.id))
        .text(&summary.kind.to_string())
        .tag(&format!("</span><span class=\"review-title\"{timing}>"))
        .text(&reveal::prose(&summary.title))
        .tag("</span>");
    badges(html, summary, marks);
    let status = summary.status;
    html.tag(&format!("</span><span class=\"review-meta\"><span class=\"status status-{0}\"><span aria-hidden=\"true\">{1}</span> {0}</span><span>by <strong>", status.as_str(), status.symbol()))
        .text(&reveal::label(&summary.by))
        .tag("</strong></span><time datetime=\"")
        .text(summary.at.as_str())
        .tag(&format!("\" title=\"{}\">{}</time>", summary.at.exact(), summary.at.ago(now)));
    if let (Some(deadline), ConfirmStatus::Pending) = (&summary.expires, status) {
        let (said, left) = match deadline.until(now) {
            Some(left) => ("expires", left),
            None => ("deadline passed", deadline.ago(now)),
        };
        html.tag(&format!(
            "<span class=\"deadline\">{said} <time datetime=\""
        ))
        .text(deadline.as_str())
        .tag(&format!(
            "\" title=\"{}\">{left}</time></span>",
            deadline.exact()
        ));
    }
    if let Some(n) = summary.steps {
        html.tag(&format!("<span>{}</span>", counted(n, "step")));
    }
    html.tag(&format!(
        "<span>{}</span></span></a></li>",
        counted(summary.decisions, "decision")
    ));
}

/// Escalated, queued, the thread's status and the problems, in that order.
fn badges(html: &mut Html, summary: &ReviewSummary, marks: RowMarks) {
    if summary.escalated && summary.status == ConfirmStatus::Pending {
        html.tag("<span class=\"badge badge-escalated\" title=\"Nobody decided it within the time its approval policy allows\">Escalated</span>");
    }
    if marks.queued {
        html.tag("<span class=\"badge badge-queued\" title=\"Your decision is kept on this device until the server is reachable\">Queued</span>");
    }
    match marks.thread {
        Some(ThreadStatus::Error) => {
            html.tag("<span class=\"badge badge-warning\" title=\"The thread's last run failed; this interrupt still waits for an answer\">Thread error</span>");
        }
        Some(other) => {
            html.tag(&format!("<span class=\"badge\" title=\"What the LangGraph thread is doing\">Thread {}</span>", other.as_str()));
        }
        None => {}
    }
    if let Some(n) = marks.problems {
        html.tag(&format!("<span class=\"badge badge-warning\" title=\"This request fails validation and cannot be approved\">⚠ {}</span>", counted(n, "problem")));
    }
}

/// `1 step`, `3 steps`.
fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use countersign_domain::Timestamp;

    fn summary(id: u32, status: ConfirmStatus, at: &str) -> ReviewSummary {
        ReviewSummary {
            id: format!("aaaaaaaa-0000-4000-8000-{id:012}").parse().unwrap(),
            status,
            target_type: TargetType::Plan,
            by: "agent".to_owned(),
            at: Timestamp::parse(at).unwrap(),
            decisions: 0,
            title: format!("Plan {id}"),
            kind: countersign_domain::wire::RowKind::Target(
                countersign_domain::model::TargetType::Plan,
            ),
            steps: Some(1),
            call: None,
            escalated: false,
            expires: None,
        }
    }

    fn now() -> DateTime<Utc> {
        Timestamp::parse("2026-11-26T12:00:00Z").unwrap().to_utc()
    }

    #[test]
    fn what_expires_first_is_listed_first_and_says_when() {
        let mut soon = summary(1, ConfirmStatus::Pending, "2026-11-26T11:59:00Z");
        soon.expires = Some(Timestamp::parse("2026-11-26T12:05:00Z").unwrap());
        let all = [
            summary(2, ConfirmStatus::Pending, "2025-11-26T10:00:00Z"),
            soon,
        ];
        let html = Inbox::of(&all).unwrap().html(now(), "/");
        assert!(html.find("Plan 1").unwrap() < html.find("Plan 2").unwrap());
        assert!(html.contains(
            "expires <time datetime=\"2026-11-26T12:05:00Z\" title=\"2026-11-26 12:05:00 UTC\">in 5 minutes</time>"
        ));
        assert!(html.contains("<option value=\"expiring\">Expires first</option>"));
    }

    #[test]
    fn pending_rows_are_listed_oldest_first_with_counts_per_status() {
        let all = [
            summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z"),
            summary(2, ConfirmStatus::Approved, "2026-11-26T10:00:00Z"),
            summary(3, ConfirmStatus::Pending, "2026-11-26T09:00:00Z"),
        ];
        let html = Inbox::of(&all).unwrap().html(now(), "/");
        let first = html.find("Plan 3").unwrap();
        assert!(first < html.find("Plan 1").unwrap(), "oldest first");
        assert!(!html.contains("Plan 2"), "only pending rows");
        assert!(html.contains("Pending<span class=\"count\">2</span>"));
        assert!(html.contains("Approved<span class=\"count\">1</span>"));
        assert!(html.contains("All<span class=\"count\">3</span>"));
        assert!(html.contains("<span>1 step</span><span>0 decisions</span>"));
        assert!(html.contains("title=\"2026-11-26 09:00:00 UTC\">3 hours ago</time>"));
        assert!(html.contains("<span>1–2 of 2</span>"));
    }

    #[test]
    fn text_from_the_agent_cannot_become_markup_or_hide_its_order() {
        let mut hostile = summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z");
        hostile.title = "<img src=x onerror=alert(1)> \u{202E}evil".to_owned();
        hostile.by = "agent\"><script>".to_owned();
        let html = Inbox::of(&[hostile]).unwrap().html(now(), "/");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt; [U+202E]evil"));
        assert!(html.contains("<option value=\"agent&quot;&gt;&lt;script&gt;\">"));
        assert!(!html.contains("<img") && !html.contains("<script"));
    }

    #[test]
    fn similar_pending_calls_are_grouped_only_two_or_more() {
        let call = |id, name: &str| ReviewSummary {
            call: Some((name.to_owned(), "s1".to_owned()).into()),
            ..summary(id, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")
        };
        let calls = [call(1, "send"), call(2, "send"), call(3, "delete")];
        let html = Inbox::of(&calls).unwrap().html(now(), "/");
        assert!(html.contains("aria-label=\"2 similar calls: send in session s1\""));
        assert!(!html.contains("similar calls: delete"));
    }

    #[test]
    fn every_link_stays_under_the_base() {
        let call = |id| ReviewSummary {
            call: Some(("send".to_owned(), "s1".to_owned()).into()),
            ..summary(id, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")
        };
        let calls = [call(1), call(2)];
        let html = Inbox::of(&calls).unwrap().html(now(), "/countersign/");
        let links: Vec<&str> = html
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .filter(|link| *link != "#main")
            .collect();
        assert_eq!(links.len(), 5 + 2 + 2, "{links:?}");
        assert!(
            links.iter().all(|l| l.starts_with("/countersign/")),
            "{links:?}"
        );
        assert!(links.contains(&"/countersign/settings"));
    }

    #[test]
    fn a_stored_head_is_drawn_with_every_requester_and_the_next_page() {
        let counts = StatusCounts {
            pending: 51,
            approved: 4,
            ..StatusCounts::default()
        };
        let head = InboxHead {
            counts,
            requesters: vec!["agent".to_owned(), "billing-bot".to_owned()],
            pending: vec![summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")],
        };
        let html = Inbox::head(&head).unwrap().html(now(), "/");
        assert!(html.contains("Plan 1"));
        assert!(
            html.contains("<option value=\"billing-bot\">billing-bot</option>"),
            "a requester of a review on no page of the head is offered"
        );
        assert!(html.contains("All<span class=\"count\">55</span>"));
        assert!(html.contains("<span>1–1 of 51</span><button type=\"button\" disabled=\"\">Previous</button><button type=\"button\">Next</button>"));
        let empty = InboxHead {
            pending: Vec::new(),
            ..head
        };
        assert!(Inbox::head(&empty).is_none());
    }

    #[test]
    fn a_drawing_holds_until_the_first_of_its_rows_times_changes() {
        let now = now();
        let mut expiring = summary(1, ConfirmStatus::Pending, "2026-11-26T09:00:00Z");
        expiring.expires = Some(Timestamp::parse("2026-11-26T12:04:50Z").unwrap());
        let summaries = vec![
            expiring,
            summary(2, ConfirmStatus::Pending, "2026-11-26T11:50:00Z"),
            summary(3, ConfirmStatus::Approved, "2026-11-26T11:59:59Z"),
        ];
        let inbox = Inbox::of(&summaries).unwrap();
        let until = inbox.holds_until(now);
        // "expires in 5 minutes" turns into "in 4 minutes" first (at 4:30 left);
        // "10 minutes ago" would change 10 s later.
        let just = chrono::Duration::nanoseconds(1);
        assert_eq!(until, now + chrono::Duration::seconds(20) + just);
        assert_eq!(inbox.html(until - just, "/"), inbox.html(now, "/"));
        assert_ne!(inbox.html(until, "/"), inbox.html(now, "/"));
    }

    #[test]
    fn an_inbox_without_pending_reviews_is_left_to_the_app() {
        let approved = summary(1, ConfirmStatus::Approved, "2026-11-26T11:00:00Z");
        assert!(Inbox::of(&[approved]).is_none());
    }

    #[test]
    fn a_rows_badges_say_escalated_queued_thread_and_problems_in_order() {
        let escalated = ReviewSummary {
            escalated: true,
            ..summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")
        };
        let marks = RowMarks {
            problems: Some(2),
            queued: true,
            thread: Some(ThreadStatus::Error),
        };
        let html = review_rows([(&escalated, marks)], now(), "/");
        let at = |text: &str| {
            html.find(text)
                .unwrap_or_else(|| panic!("{text} in {html}"))
        };
        assert!(at(">Escalated<") < at(">Queued<"));
        assert!(at(">Queued<") < at(">Thread error<"));
        assert!(at(">Thread error<") < at(">⚠ 2 problems<"));
        let busy = RowMarks {
            thread: Some(ThreadStatus::Busy),
            ..RowMarks::default()
        };
        assert!(review_rows([(&escalated, busy)], now(), "/").contains(">Thread busy</span>"));
    }

    #[test]
    fn only_a_pages_first_row_is_named_for_the_browser_to_time() {
        let first = summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z");
        let second = summary(2, ConfirmStatus::Pending, "2026-11-26T11:30:00Z");
        let html = review_rows(
            [
                (&first, RowMarks::default()),
                (&second, RowMarks::default()),
            ],
            now(),
            "/",
        );
        let named = format!(
            "<span class=\"review-title\" elementtiming=\"{FIRST_ROW_TIMING}\">Plan 1</span>"
        );
        assert!(html.contains(&named), "{html}");
        assert_eq!(html.matches("elementtiming").count(), 1, "{html}");
    }

    #[test]
    fn a_decided_rows_escalation_is_not_shown_and_bare_rows_have_no_badge() {
        let decided = ReviewSummary {
            escalated: true,
            ..summary(1, ConfirmStatus::Approved, "2026-11-26T11:00:00Z")
        };
        let html = review_rows([(&decided, RowMarks::default())], now(), "/");
        assert!(!html.contains("badge"), "{html}");
        assert!(html.starts_with("<li class=\"review-row\">") && html.ends_with("</li>"));
    }

    /// A server's answer: `items`, with a next page, and these counts.
    fn answer(items: Vec<ReviewSummary>, counts: StatusCounts) -> SummaryPage {
        SummaryPage {
            items,
            next_cursor: Some("c1".to_owned()),
            counts,
            position: Some(9),
        }
    }

    #[test]
    fn a_servers_page_is_drawn_with_its_counts_its_link_and_its_next_page() {
        let counts = StatusCounts {
            pending: 120,
            approved: 3,
            rejected: 0,
            cancelled: 1,
        };
        let page = answer(
            vec![summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")],
            counts,
        );
        let html = Inbox::served(&page, "https://review.example.com/?a=\"&b")
            .unwrap()
            .html(now(), "/");
        assert!(html.contains("<span class=\"link-state\" role=\"status\" title=\"https://review.example.com/?a=&quot;&amp;b\" data-state=\"connecting\">Connecting…</span><nav"));
        assert!(html.contains("aria-label=\"120 pending\">120</span>"));
        assert!(html.contains("All<span class=\"count\">124</span>"));
        assert!(html.contains("<span>1–1 of 120</span><button type=\"button\" disabled=\"\">Previous</button><button type=\"button\">Next</button>"));
    }

    #[test]
    fn the_first_paint_wraps_the_inbox_and_a_base_can_only_be_text() {
        let page = answer(
            vec![summary(1, ConfirmStatus::Pending, "2026-11-26T11:00:00Z")],
            StatusCounts::default(),
        );
        let inbox = Inbox::served(&page, "http://127.0.0.1:4000").unwrap();
        let drawn = inbox.first_paint(now(), "/");
        assert!(drawn.starts_with("<div class=\"first-paint\"><a class=\"skip-link\""));
        assert!(drawn.ends_with("</main></div>"));
        let hostile = inbox.html(now(), "/\"><script>x</script>/");
        assert!(!hostile.contains("<script>"));
        assert!(hostile.contains("href=\"/&quot;&gt;&lt;script&gt;x&lt;/script&gt;/reviews/"));
    }

    #[test]
    fn an_empty_page_from_a_server_is_left_to_the_app() {
        let page = answer(Vec::new(), StatusCounts::default());
        assert!(Inbox::served(&page, "http://127.0.0.1:4000").is_none());
    }
}
