//! The inbox (`/`): reviews filtered by status, target type, requester and text,
//! paged, with counts per status. Every filter lives in the URL (`filters`);
//! the rows are written as HTML in one step and keep the reviewer's place
//! (`focus`); the tabs, filters, rows and pager are `controls`.

mod controls;
mod filters;
mod focus;

use crate::desk::{Desk, Entry, Link, Listing, Origin, Reviews, Source};
use crate::router::{href, use_location};
use crate::split::on_demand;
use controls::{FilterBar, ReviewRows, StatusTabs};
use countersign_domain::model::ConfirmStatus;
use countersign_domain::MplpId;
use filters::{Filters, Go};
use leptos::prelude::*;
use std::sync::Arc;

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
    let desk = Desk::from_context();
    let location = use_location();
    let filters = Memo::new(move |_| {
        location.query.track();
        Filters::from_query(|k| location.param(k))
    });
    let go = Go(location);
    let ask = Memo::new(move |_| filters.with(Filters::ask));
    let listing = desk.listing(ask);
    let group_result = RwSignal::new(None::<String>);
    mark_ready(listing);
    give_way_to_first_paint(listing);
    view! {
        <section class="inbox" aria-labelledby="inbox-title">
            <div class="page-head">
                <h1 id="inbox-title">"Inbox"</h1>
                <p class="subtle">"Requests from agents waiting for a human decision."</p>
            </div>
            <Unreachable />
            <ListingFailure listing />
            <StatusTabs filters listing go />
            <FilterBar filters listing go />
            // A group's outcome, said here: a decided group leaves the page.
            <p role="status" class="subtle group-result">{move || group_result.get()}</p>
            <Show
                when=move || listing.with(|l| !l.rows.is_empty())
                fallback=move || view! { <EmptyState filters listing /> }
            >
                <ReviewRows filters listing go group_result />
            </Show>
        </section>
    }
}

/// Marks the moment the inbox is ready, once: it lists reviews, or says
/// there are none (not while it waits for them).
fn mark_ready(listing: Memo<Listing>) {
    let reviews = Reviews::from_context();
    let ready = StoredValue::new(false);
    Effect::new(move |_| {
        let listed = listing.with(|l| !l.loading && (!reviews.reading() || !l.rows.is_empty()));
        if listed && !ready.get_value() {
            ready.set_value(true);
            crate::browser::mark("countersign:inbox-ready");
        }
    });
}

/// The first paint's drawing of this page gives way once the screen shows
/// something of its own (rows, a message, an error), when the inbox is
/// left, and after two seconds at most: a picture that cannot be clicked
/// must not stand in for a server that is slow to answer the app.
fn give_way_to_first_paint(listing: Memo<Listing>) {
    let origin = Origin::from_context();
    Effect::new(move |_| {
        let own = listing.with(|l| !l.rows.is_empty() || !l.loading || l.failure.is_some())
            || origin.link().with(|l| matches!(l, Link::Offline(_)));
        if own {
            crate::browser::remove_first_paint();
        }
    });
    on_cleanup(crate::browser::remove_first_paint);
    set_timeout(
        crate::browser::remove_first_paint,
        std::time::Duration::from_secs(2),
    );
}

/// Says why this page could not be listed (unless the whole server is
/// unreachable, which `Unreachable` says).
#[component]
fn ListingFailure(listing: Memo<Listing>) -> impl IntoView {
    let origin = Origin::from_context();
    move || {
        listing
            .with(|l| l.failure.clone())
            .filter(|_| origin.link().with(|l| !matches!(l, Link::Offline(_))))
            .map(|why| view! {
                <div class="notice notice-danger" role="alert">
                    <p><strong>"This page of the inbox could not be listed"</strong>{format!(": {why}.")}</p>
                    <p>"Nothing was changed; the page is asked for again when the server's live stream reconnects, or when you change a filter."</p>
                </div>
            })
    }
}

/// Says so when the server cannot be reached, so an empty inbox is never
/// mistaken for "nothing waiting".
#[component]
fn Unreachable() -> impl IntoView {
    let origin = Origin::from_context();
    let server = origin.source().server_name();
    move || {
        origin.link().with(|link| match link {
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

#[component]
fn EmptyState(filters: Memo<Filters>, listing: Memo<Listing>) -> impl IntoView {
    let (reviews, origin) = (Reviews::from_context(), Origin::from_context());
    let message = move || {
        let f = filters.get();
        if reviews.reading() {
            "Reading the stored reviews…"
        } else if origin.link().with(|l| matches!(l, Link::Offline(_))) {
            "Nothing can be listed while the server cannot be reached."
        } else if listing.with(|l| l.loading) || origin.link().with(|l| *l == Link::Connecting) {
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
            {(origin.source() == Source::Local).then(|| view! {
                <p><a href=href("/import")>"Import MPLP JSON"</a>" to review a plan or a confirm from a file."</p>
            })}
        </div>
    }
}
