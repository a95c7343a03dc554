//! The app shell: header, landmarks, and the list of reviews waiting.

use crate::demo;
use countersign_domain::model::TargetType;
use countersign_domain::Review;
use leptos::prelude::*;

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    view! {
        <a class="skip-link" href="#main">"Skip to content"</a>
        <header class="topbar">
            <span class="brand" aria-label="Countersign">
                <span class="brand-mark" aria-hidden="true">"✓"</span>
                "Countersign"
            </span>
        </header>
        <main id="main" tabindex="-1">
            <h1>"Waiting for your decision"</h1>
            {match demo::reviews() {
                Ok(reviews) => view! { <ReviewList reviews /> }.into_any(),
                Err(message) => view! { <p role="alert" class="error">{message}</p> }.into_any(),
            }}
        </main>
    }
}

/// The reviews, one row each, with the domain crate's verdict on each one.
#[component]
fn ReviewList(reviews: Vec<Review>) -> impl IntoView {
    if reviews.is_empty() {
        return view! { <p class="empty">"Nothing is waiting for you."</p> }.into_any();
    }
    view! {
        <ul class="review-list" aria-label="Reviews">
            {reviews.into_iter().map(|review| view! { <ReviewRow review /> }).collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn ReviewRow(review: Review) -> impl IntoView {
    let problems = review.validate().len();
    let what = match (review.plan(), review.confirm.target_type) {
        (Some(plan), _) => format!("Plan: {}", plan.title),
        (None, TargetType::Other) => review
            .confirm
            .reason
            .clone()
            .unwrap_or_else(|| "Request".to_owned()),
        (None, kind) => format!("{kind} {}", review.confirm.target_id),
    };
    let steps = review.plan().map(|p| p.steps.len());
    view! {
        <li class="review-row">
            <span class="review-title">{what}</span>
            <span class="review-meta">
                "asked by " <strong>{review.confirm.requested_by_role.clone()}</strong>
                {steps.map(|n| format!(" · {n} steps"))}
                " · " {review.confirm.status.as_str()}
            </span>
            {(problems > 0).then(|| view! {
                <span class="badge badge-warning">{format!("{problems} problem(s)")}</span>
            })}
        </li>
    }
}
