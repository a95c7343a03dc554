//! The inbox (`/`): reviews filtered by status, target type, requester and text,
//! paged, with counts per status. Every filter lives in the URL.

use crate::components::call_group::{similar_calls, CallGroup};
use crate::desk::{Ask, Desk, Entry, Link, Listing, PageLink};
use crate::router::{href, use_location};
use crate::split::on_demand;
use countersign_domain::model::{ConfirmStatus, TargetType};
use countersign_domain::wire::{Order, ReviewQuery};
use countersign_domain::MplpId;
use countersign_markup::{review_rows, RowMarks};
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// The inbox's filters, read from and written to the query string.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Filters {
    /// `None` = all statuses.
    status: Option<ConfirmStatus>,
    target_type: Option<TargetType>,
    requester: Option<String>,
    text: String,
    newest_first: bool,
    page: usize,
    /// Where a server's page starts (`after` in the URL).
    cursor: Option<String>,
}

impl Filters {
    fn from_query(get: impl Fn(&str) -> Option<String>) -> Self {
        let status = match get("status").as_deref() {
            Some("all") => None,
            Some(s) => s.parse().ok().or(Some(ConfirmStatus::Pending)),
            None => Some(ConfirmStatus::Pending),
        };
        Filters {
            status,
            target_type: get("type").and_then(|t| t.parse().ok()),
            requester: get("requester").filter(|r| !r.is_empty()),
            text: get("q").unwrap_or_default(),
            newest_first: get("sort").as_deref() == Some("newest"),
            page: get("page")
                .and_then(|p| p.parse::<usize>().ok())
                .unwrap_or(1)
                .max(1),
            cursor: get("after").filter(|c| !c.is_empty()),
        }
    }

    /// What the desk is asked for.
    fn ask(&self) -> Ask {
        Ask {
            query: ReviewQuery {
                status: self.status,
                target_type: self.target_type,
                requester: self.requester.clone(),
                text: self.text.clone(),
                order: if self.newest_first {
                    Order::Newest
                } else {
                    Order::Oldest
                },
                cursor: self.cursor.clone(),
                limit: 0,
            },
            page: self.page,
        }
    }

    /// The same filters from their first page.
    fn first_page(self) -> Filters {
        Filters {
            page: 1,
            cursor: None,
            ..self
        }
    }

    fn to_query(&self) -> String {
        let mut parts = Vec::new();
        match self.status {
            Some(ConfirmStatus::Pending) => {}
            Some(s) => parts.push(format!("status={s}")),
            None => parts.push("status=all".to_owned()),
        }
        if let Some(t) = self.target_type {
            parts.push(format!("type={t}"));
        }
        if let Some(r) = &self.requester {
            parts.push(format!("requester={}", encode(r)));
        }
        if !self.text.is_empty() {
            parts.push(format!("q={}", encode(&self.text)));
        }
        if self.newest_first {
            parts.push("sort=newest".to_owned());
        }
        if self.page > 1 {
            parts.push(format!("page={}", self.page));
        }
        if let Some(cursor) = &self.cursor {
            parts.push(format!("after={}", encode(cursor)));
        }
        if parts.is_empty() {
            "/".to_owned()
        } else {
            format!("/?{}", parts.join("&"))
        }
    }
}

fn encode(text: &str) -> String {
    js_sys::encode_uri_component(text)
        .as_string()
        .unwrap_or_default()
}

on_demand! {
    /// How many validation problems each read entry has (0 = valid).
    in review fn count_problems(rows: Vec<Arc<Entry>>) -> Vec<(MplpId, usize)> {
        rows.iter()
            .filter_map(|e| Some((e.id(), e.problems()?)))
            .collect()
    }
}

/// The inbox page.
#[component]
pub fn Inbox() -> impl IntoView {
    let desk = expect_context::<Desk>();
    let location = use_location();
    let filters = Memo::new(move |_| {
        location.query.track();
        Filters::from_query(|k| location.param(k))
    });
    let go = Callback::new(move |f: Filters| location.navigate(&f.to_query(), true));

    let ask = Memo::new(move |_| filters.with(Filters::ask));
    let listing = desk.listing(ask);
    let visible = Memo::new(move |_| listing.with(|l| l.rows.clone()));
    let group_result = RwSignal::new(None::<String>);
    // The rows on screen are validated a moment after they are drawn, so a
    // page of rows appears at once and its warnings right after.
    let problems = RwSignal::new(Vec::<(MplpId, usize)>::new());
    // (The validation code loads with the review screen's, off the first load.)
    Effect::new(move |_| {
        let rows = visible.get();
        // Rows listed from the index have nothing to check until their reviews
        // are read (then this runs again): the code is not fetched for them.
        if !rows.iter().any(|e| e.review().is_some()) {
            return;
        }
        // Cancelled when the rows change again (only the count for the rows on
        // screen now is kept) or when the inbox goes (a row was opened).
        leptos::task::spawn_local_scoped_with_cancellation(async move {
            crate::browser::next_task().await;
            if let Ok(counted) = count_problems(rows).await {
                problems.set(counted);
            }
        });
    });

    // The rows on this page, each with its problem count (when over 0),
    // whether a decision on it waits in the outbox, and (LangGraph) its
    // thread's status when the thread is not simply waiting: written as the
    // list's HTML in one step, again whenever any of them changes.
    let rows = Memo::new(move |_| {
        let visible = visible.get();
        problems.with(|counted| {
            let marked = visible.iter().map(|e| {
                let id = e.id();
                let problems = counted.iter().find(|(row, _)| *row == id).map(|(_, n)| *n);
                let marks = RowMarks {
                    problems: problems.filter(|n| *n > 0),
                    queued: desk.queued(&id.to_string()).is_some(),
                    thread: desk.thread_state(id),
                };
                (e.summary(), marks)
            });
            review_rows(marked, crate::browser::now(), crate::router::base())
        })
    });
    let list = NodeRef::<leptos::html::Ol>::new();
    let focused = keep_row_focus(list, rows);

    let status_tab = move |status: Option<ConfirmStatus>, label: &'static str| {
        let count = move || {
            listing.with(|l| match status {
                Some(s) => l.counts.of(s),
                None => l.counts.total(),
            })
        };
        let current = move || filters.with(|f| f.status == status);
        view! {
            <button
                type="button"
                class="tab"
                aria-pressed=move || current().to_string()
                on:click=move |_| go.run(Filters { status, ..filters.get_untracked() }.first_page())
            >
                {label}
                <span class="count">{count}</span>
            </button>
        }
    };

    let on_type = move |ev| {
        let value = event_target_value(&ev);
        go.run(
            Filters {
                target_type: value.parse().ok(),
                ..filters.get_untracked()
            }
            .first_page(),
        )
    };
    let on_requester = move |ev| {
        let value = event_target_value(&ev);
        go.run(
            Filters {
                requester: Some(value).filter(|v| !v.is_empty()),
                ..filters.get_untracked()
            }
            .first_page(),
        )
    };
    let on_search = move |ev| {
        go.run(
            Filters {
                text: event_target_value(&ev),
                ..filters.get_untracked()
            }
            .first_page(),
        )
    };
    let on_sort = move |ev| {
        go.run(
            Filters {
                newest_first: event_target_value(&ev) == "newest",
                ..filters.get_untracked()
            }
            .first_page(),
        )
    };
    let to_page = move |link: Option<PageLink>| {
        if let Some(link) = link {
            go.run(Filters {
                page: link.page,
                cursor: link.cursor,
                ..filters.get_untracked()
            })
        }
    };
    let previous_page =
        move |_: leptos::ev::MouseEvent| to_page(listing.with_untracked(|l| l.previous.clone()));
    let next_page =
        move |_: leptos::ev::MouseEvent| to_page(listing.with_untracked(|l| l.next.clone()));

    // Ready once it lists reviews, or says there are none (not while it waits for them).
    let ready = StoredValue::new(false);
    Effect::new(move |_| {
        let listed = listing.with(|l| !l.loading && (!desk.reading() || !l.rows.is_empty()));
        if listed && !ready.get_value() {
            ready.set_value(true);
            crate::browser::mark("countersign:inbox-ready");
        }
    });
    // The first paint's drawing of this page gives way once the screen shows
    // something of its own (rows, a message, an error), when the inbox is
    // left, and after two seconds at most: a picture that cannot be clicked
    // must not stand in for a server that is slow to answer the app.
    Effect::new(move |_| {
        let own = listing.with(|l| !l.rows.is_empty() || !l.loading || l.failure.is_some())
            || desk.link().with(|l| matches!(l, Link::Offline(_)));
        if own {
            crate::browser::remove_first_paint();
        }
    });
    on_cleanup(crate::browser::remove_first_paint);
    set_timeout(
        crate::browser::remove_first_paint,
        std::time::Duration::from_secs(2),
    );
    view! {
        <section class="inbox" aria-labelledby="inbox-title">
            <div class="page-head">
                <h1 id="inbox-title">"Inbox"</h1>
                <p class="subtle">"Requests from agents waiting for a human decision."</p>
            </div>
            <Unreachable />
            {move || listing.with(|l| l.failure.clone()).filter(|_| desk.link().with(|l| !matches!(l, Link::Offline(_)))).map(|why| view! {
                <div class="notice notice-danger" role="alert">
                    <p><strong>"This page of the inbox could not be listed"</strong>{format!(": {why}.")}</p>
                    <p>"Nothing was changed; the page is asked for again when the server's live stream reconnects, or when you change a filter."</p>
                </div>
            })}
            <div class="tabs" role="group" aria-label="Status">
                {status_tab(Some(ConfirmStatus::Pending), "Pending")}
                {status_tab(Some(ConfirmStatus::Approved), "Approved")}
                {status_tab(Some(ConfirmStatus::Rejected), "Rejected")}
                {status_tab(Some(ConfirmStatus::Cancelled), "Cancelled")}
                {status_tab(None, "All")}
            </div>
            <div class="filters">
                <label class="search">
                    <span class="visually-hidden">"Search reviews"</span>
                    <input
                        id="search"
                        type="search"
                        placeholder="Search title, reason, requester…  ( / )"
                        prop:value=move || filters.with(|f| f.text.clone())
                        on:input=on_search
                    />
                </label>
                <label>
                    "Type "
                    <select on:change=on_type prop:value=move || filters.with(|f| f.target_type.map(|t| t.to_string()).unwrap_or_default())>
                        <option value="">"Any"</option>
                        {TargetType::ALL.iter().map(|t| view! { <option value=t.as_str()>{t.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label>
                    "Requester "
                    <select on:change=on_requester prop:value=move || filters.with(|f| f.requester.clone().unwrap_or_default())>
                        <option value="">"Anyone"</option>
                        {move || listing.with(|l| l.requesters.clone()).into_iter().map(|r| view! { <option value=r.clone()>{r.clone()}</option> }).collect_view()}
                    </select>
                </label>
                <label>
                    "Order "
                    <select on:change=on_sort prop:value=move || if filters.with(|f| f.newest_first) { "newest" } else { "oldest" }>
                        <option value="oldest">"Oldest first"</option>
                        <option value="newest">"Newest first"</option>
                    </select>
                </label>
            </div>
            // A group's outcome, said here: a decided group leaves the page.
            <p role="status" class="subtle group-result">{move || group_result.get()}</p>
            <Show
                when=move || visible.with(|rows| !rows.is_empty())
                fallback=move || view! { <EmptyState filters listing /> }
            >
                {move || {
                    let groups = visible.with(|rows| similar_calls(rows));
                    (!groups.is_empty()).then(|| view! {
                        <ul class="call-groups" aria-label="Similar pending calls">
                            {groups.into_iter().map(|(name, session, members)| view! { <CallGroup name session members result=group_result /> }).collect_view()}
                        </ul>
                    })
                }}
                <ol
                    class="review-list"
                    aria-label="Reviews"
                    node_ref=list
                    inner_html=rows
                    on:focusin=move |ev| focused.set_value(row_of(ev.target()))
                    on:focusout=move |ev: web_sys::FocusEvent| {
                        // Focus moved elsewhere (not lost with a redrawn row): no row holds the place.
                        if ev.related_target().is_some() {
                            focused.set_value(None);
                        }
                    }
                ></ol>
                <nav class="pager" aria-label="Pages">
                    <span>{move || listing.with(pager_text)}</span>
                    <button type="button" disabled=move || listing.with(|l| l.previous.is_none()) on:click=previous_page>"Previous"</button>
                    <button type="button" disabled=move || listing.with(|l| l.next.is_none()) on:click=next_page>"Next"</button>
                </nav>
            </Show>
        </section>
    }
}

/// Says so when the server cannot be reached, so an empty inbox is never
/// mistaken for "nothing waiting".
#[component]
fn Unreachable() -> impl IntoView {
    let desk = expect_context::<Desk>();
    let server = if desk.langgraph().is_some() {
        "The LangGraph server"
    } else {
        "The server"
    };
    move || {
        desk.link().with(|link| match link {
            Link::Offline(why) => Some(view! {
                <div class="notice notice-danger" role="alert">
                    <p><strong>{format!("{server} cannot be reached")}</strong>{format!(": {why}.")}</p>
                    <p>"Its pending requests cannot be listed until it is back (checked again every few seconds); decisions already made stay in the history."</p>
                </div>
            }),
            _ => None,
        })
    }
}

/// "1–50 of 120", or "1–50" when the backend does not count the matches.
fn pager_text(listing: &Listing) -> String {
    let start = listing.offset + 1;
    let end = listing.offset + listing.rows.len();
    match listing.matching {
        Some(total) => format!("{start}–{end} of {total}"),
        None => format!("{start}–{end}"),
    }
}

#[component]
fn EmptyState(filters: Memo<Filters>, listing: Memo<Listing>) -> impl IntoView {
    let desk = expect_context::<Desk>();
    let message = move || {
        let f = filters.get();
        if desk.reading() {
            "Reading the stored reviews…"
        } else if desk.link().with(|l| matches!(l, Link::Offline(_))) {
            "Nothing can be listed while the server cannot be reached."
        } else if listing.with(|l| l.loading) || desk.link().with(|l| *l == Link::Connecting) {
            "Loading from the server…"
        } else if !f.text.is_empty() || f.target_type.is_some() || f.requester.is_some() {
            "No review matches these filters. Clear the search or pick “Any” to see more."
        } else if f.status == Some(ConfirmStatus::Pending) {
            "Nothing is waiting for you. New requests from agents appear here."
        } else {
            "No review has this status yet."
        }
    };
    view! {
        <div class="empty" role="status">
            <p>{message}</p>
            {(!desk.remote()).then(|| view! {
                <p><a href=href("/import")>"Import MPLP JSON"</a>" to review a plan or a confirm from a file."</p>
            })}
        </div>
    }
}

/// The review whose row link has the focus, kept across redraws of the rows:
/// when the rows are written again while a row's link had the focus, that
/// row's new link takes it back, so a reviewer moving with `j`/`k` keeps
/// their place when a badge arrives.
fn keep_row_focus(
    list: NodeRef<leptos::html::Ol>,
    rows: Memo<String>,
) -> StoredValue<Option<MplpId>> {
    let focused = StoredValue::new(None::<MplpId>);
    Effect::new(move |_| {
        rows.track();
        let (Some(list), Some(id)) = (list.get(), focused.get_value()) else {
            return;
        };
        let nothing_focused = web_sys::window()
            .and_then(|w| w.document()?.active_element())
            .is_none_or(|el| el.tag_name() == "BODY");
        let link = list
            .query_selector(&format!(
                "a.review-link[href=\"{}\"]",
                href(&format!("/reviews/{id}"))
            ))
            .ok()
            .flatten()
            .and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok());
        if let (true, Some(link)) = (nothing_focused, link) {
            let _ = link.focus();
        }
    });
    focused
}

/// The review whose row link is `target` (or holds it), if any.
fn row_of(target: Option<web_sys::EventTarget>) -> Option<MplpId> {
    let link = target?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .closest("a.review-link")
        .ok()??;
    link.get_attribute("href")?
        .strip_prefix(&href("/reviews/"))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::*;

    fn parse(query: &[(&str, &str)]) -> Filters {
        Filters::from_query(|k| {
            query
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| v.to_string())
        })
    }

    #[wasm_bindgen_test]
    fn default_is_pending_oldest_first() {
        let f = parse(&[]);
        assert_eq!(f.status, Some(ConfirmStatus::Pending));
        assert!(!f.newest_first);
        assert_eq!(f.page, 1);
        assert_eq!(f.to_query(), "/");
    }

    #[wasm_bindgen_test]
    fn filters_round_trip_through_the_url() {
        let f = Filters {
            status: None,
            target_type: Some(TargetType::Plan),
            requester: Some("dba admin".into()),
            text: "rollback & restore".into(),
            newest_first: true,
            page: 3,
            cursor: None,
        };
        let url = f.to_query();
        assert_eq!(url, "/?status=all&type=plan&requester=dba%20admin&q=rollback%20%26%20restore&sort=newest&page=3");
        let query: Vec<(String, String)> = url[2..]
            .split('&')
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap();
                (
                    k.to_owned(),
                    js_sys::decode_uri_component(v)
                        .unwrap()
                        .as_string()
                        .unwrap(),
                )
            })
            .collect();
        let back = Filters::from_query(|k| {
            query
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        });
        assert_eq!(back, f);
    }

    #[wasm_bindgen_test]
    fn unknown_values_fall_back() {
        let f = parse(&[("status", "bogus"), ("page", "-2"), ("type", "nope")]);
        assert_eq!(f.status, Some(ConfirmStatus::Pending));
        assert_eq!(f.page, 1);
        assert_eq!(f.target_type, None);
    }
}
