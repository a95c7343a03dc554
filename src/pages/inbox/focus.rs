//! Keeping the reviewer's place in the list: the rows are written as HTML in
//! one step, so a redraw would drop the focus from the row link that had it.

use crate::router::href;
use countersign_domain::MplpId;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The review whose row link has the focus, kept across redraws of the rows:
/// when the rows are written again while a row's link had the focus, that
/// row's new link takes it back, so a reviewer moving with `j`/`k` keeps
/// their place when a badge arrives.
pub(super) fn keep_row_focus(
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
pub(super) fn row_of(target: Option<web_sys::EventTarget>) -> Option<MplpId> {
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
