//! Prose from the agent that may be very long: shown whole and literal, in a box
//! that scrolls on its own (and can be reached by keyboard) once it is long.

use countersign_domain::text::reveal;
use countersign_markup::LONG_TEXT_BYTES;
use leptos::prelude::*;

/// A paragraph of agent prose; `label` names the scrolling region when it is long.
#[component]
pub fn LongText(class: &'static str, label: &'static str, text: String) -> impl IntoView {
    let long = text.len() > LONG_TEXT_BYTES;
    view! {
        <p class=format!("long-text {class}") role=long.then_some("region") aria-label=long.then_some(label) tabindex=long.then_some("0")>
            {reveal::prose(&text)}
        </p>
    }
}
