//! The inbox's controls: the status tabs with their counts, the filters, and
//! the page of rows with its groups of similar calls and its pager. Each
//! change of a filter is a new URL (from the first page).

use super::filters::{Filters, Go};
use super::focus::{keep_row_focus, row_of};
use crate::components::call_group::{similar_calls, CallGroup};
use crate::desk::{Decisions, Listing, PageLink, Reviews};
use countersign_domain::model::{ConfirmStatus, TargetType};
use countersign_domain::wire::Order;
use countersign_domain::MplpId;
use countersign_markup::{review_rows, RowMarks};
use leptos::prelude::*;

/// The status tabs, each with how many reviews it holds.
#[component]
pub(super) fn StatusTabs(filters: Memo<Filters>, listing: Memo<Listing>, go: Go) -> impl IntoView {
    let tab = move |status: Option<ConfirmStatus>, label: &'static str| {
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
    view! {
        <div class="tabs" role="group" aria-label="Status">
            {tab(Some(ConfirmStatus::Pending), "Pending")}
            {tab(Some(ConfirmStatus::Approved), "Approved")}
            {tab(Some(ConfirmStatus::Rejected), "Rejected")}
            {tab(Some(ConfirmStatus::Cancelled), "Cancelled")}
            {tab(None, "All")}
        </div>
    }
}

/// The search box and the type, requester and order filters.
#[component]
pub(super) fn FilterBar(filters: Memo<Filters>, listing: Memo<Listing>, go: Go) -> impl IntoView {
    // Every filter changes the same way: the new value, from the first page.
    let refine = move |set: fn(&mut Filters, String)| {
        move |ev| {
            let mut next = filters.get_untracked();
            set(&mut next, event_target_value(&ev));
            go.run(next.first_page());
        }
    };
    let requesters = move || {
        listing
            .with(|l| l.requesters.clone())
            .into_iter()
            .map(|r| view! { <option value=r.clone()>{r.clone()}</option> })
            .collect_view()
    };
    view! {
        <div class="filters">
            <label class="search">
                <span class="visually-hidden">"Search reviews"</span>
                <input
                    id="search"
                    type="search"
                    placeholder="Search title, reason, requester…  ( / )"
                    prop:value=move || filters.with(|f| f.text.clone())
                    on:input=refine(|f, v| f.text = v)
                />
            </label>
            <label>
                "Type "
                <select
                    on:change=refine(|f, v| f.target_type = v.parse().ok())
                    prop:value=move || filters.with(|f| f.target_type.map(|t| t.to_string()).unwrap_or_default())
                >
                    <option value="">"Any"</option>
                    {TargetType::ALL.iter().map(|t| view! { <option value=t.as_str()>{t.as_str()}</option> }).collect_view()}
                </select>
            </label>
            <label>
                "Requester "
                <select
                    on:change=refine(|f, v| f.requester = Some(v).filter(|v| !v.is_empty()))
                    prop:value=move || filters.with(|f| f.requester.clone().unwrap_or_default())
                >
                    <option value="">"Anyone"</option>
                    {requesters}
                </select>
            </label>
            <label>
                "Order "
                <select
                    on:change=refine(|f, v| f.order = Order::from_wire(&v).unwrap_or(Order::Expiring))
                    prop:value=move || filters.with(|f| f.order.as_str())
                >
                    {Order::ALL.map(|o| view! { <option value=o.as_str()>{o.label()}</option> }).collect_view()}
                </select>
            </label>
        </div>
    }
}

/// The page of rows: groups of similar pending calls, the rows themselves
/// (written as the list's HTML in one step, again whenever any of them
/// changes), and the pager.
#[component]
pub(super) fn ReviewRows(
    filters: Memo<Filters>,
    listing: Memo<Listing>,
    go: Go,
    group_result: RwSignal<Option<String>>,
) -> impl IntoView {
    let visible = Memo::new(move |_| listing.with(|l| l.rows.clone()));
    let rows = row_html(visible);
    let list = NodeRef::<leptos::html::Ol>::new();
    let focused = keep_row_focus(list, rows);
    let groups = move || {
        let groups = visible.with(|rows| similar_calls(rows));
        (!groups.is_empty()).then(|| view! {
            <ul class="call-groups" aria-label="Similar pending calls">
                {groups.into_iter().map(|(name, session, members)| view! { <CallGroup name session members result=group_result /> }).collect_view()}
            </ul>
        })
    };
    view! {
        {groups}
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
        <Pager filters listing go />
    }
}

/// The rows on screen as HTML, each with its problem count (when over 0),
/// whether a decision on it waits in the outbox, and (LangGraph) its
/// thread's status when the thread is not simply waiting. The rows are
/// validated a moment after they are drawn, so a page of rows appears at
/// once and its warnings right after.
fn row_html(visible: Memo<Vec<std::sync::Arc<crate::desk::Entry>>>) -> Memo<String> {
    let (reviews, decisions) = (Reviews::from_context(), Decisions::from_context());
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
            if let Ok(counted) = super::count_problems(rows).await {
                problems.set(counted);
            }
        });
    });
    Memo::new(move |_| {
        let visible = visible.get();
        problems.with(|counted| {
            let marked = visible.iter().map(|e| {
                let id = e.id();
                let problems = counted.iter().find(|(row, _)| *row == id).map(|(_, n)| *n);
                let marks = RowMarks {
                    problems: problems.filter(|n| *n > 0),
                    queued: decisions.queued(id).is_some(),
                    thread: reviews.thread_state(id),
                };
                (e.summary(), marks)
            });
            review_rows(marked, crate::browser::now(), crate::router::base())
        })
    })
}

/// "1–50 of 120" with the previous and next pages.
#[component]
fn Pager(filters: Memo<Filters>, listing: Memo<Listing>, go: Go) -> impl IntoView {
    let to_page = move |link: Option<PageLink>| {
        if let Some(link) = link {
            go.run(Filters {
                page: link.page,
                cursor: link.cursor,
                ..filters.get_untracked()
            })
        }
    };
    let previous = move |_| to_page(listing.with_untracked(|l| l.previous.clone()));
    let next = move |_| to_page(listing.with_untracked(|l| l.next.clone()));
    view! {
        <nav class="pager" aria-label="Pages">
            <span>{move || listing.with(pager_text)}</span>
            <button type="button" disabled=move || listing.with(|l| l.previous.is_none()) on:click=previous>"Previous"</button>
            <button type="button" disabled=move || listing.with(|l| l.next.is_none()) on:click=next>"Next"</button>
        </nav>
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
