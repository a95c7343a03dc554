//! Markdown shown safely: the blocks of `crate::markdown` as elements and
//! text nodes (never HTML parsed from the text).

use countersign_domain::text::markdown::{parse, Block, Inline};
use leptos::prelude::*;

/// `text` (Markdown) as formatted, inert content.
#[component]
pub fn Markdown(text: String) -> impl IntoView {
    parse(&text)
        .into_iter()
        .map(|block| match block {
            Block::Paragraph(runs) => view! { <p>{inline(runs)}</p> }.into_any(),
            Block::Heading(runs) => view! { <p><strong>{inline(runs)}</strong></p> }.into_any(),
            Block::List {
                ordered: true,
                items,
            } => view! { <ol>{items.into_iter().map(|i| view! { <li>{inline(i)}</li> }).collect_view()}</ol> }
                .into_any(),
            Block::List { items, .. } => {
                view! { <ul>{items.into_iter().map(|i| view! { <li>{inline(i)}</li> }).collect_view()}</ul> }
                    .into_any()
            }
            Block::Code(code) => view! { <pre><code>{code}</code></pre> }.into_any(),
        })
        .collect_view()
}

fn inline(runs: Vec<Inline>) -> impl IntoView {
    runs.into_iter()
        .map(|run| match run {
            Inline::Text(t) => t.into_any(),
            Inline::Code(t) => view! { <code>{t}</code> }.into_any(),
            Inline::Strong(t) => view! { <strong>{t}</strong> }.into_any(),
            Inline::Emphasis(t) => view! { <em>{t}</em> }.into_any(),
        })
        .collect_view()
}
