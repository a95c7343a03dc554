//! Keyboard shortcuts: `j`/`k` move through the inbox, `Enter` opens, `a`
//! approves, `r` focuses the rejection reason, `Esc` goes back, `/` searches,
//! `?` shows the list.

use crate::router::use_location;
use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The shortcuts, for the help dialog.
pub const SHORTCUTS: [(&str, &str); 7] = [
    ("j / k", "next / previous review in the inbox"),
    ("Enter", "open the selected review"),
    ("a", "approve the open review"),
    ("r", "reject: focuses the reason (Ctrl+Enter rejects)"),
    ("Esc", "back to the inbox"),
    ("/", "search the inbox"),
    ("?", "show or hide these shortcuts"),
];

/// Listens for the shortcuts on the whole window; `help` toggles the dialog.
pub fn use_shortcuts(help: RwSignal<bool>) {
    let location = use_location();
    let handle = window_event_listener(ev::keydown, move |event| {
        if event.ctrl_key() || event.meta_key() || event.alt_key() {
            return;
        }
        let typing = event
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        let key = event.key();
        if key == "Escape" {
            if help.get_untracked() {
                help.set(false);
            } else if typing {
                blur_active();
            } else if location.path.get_untracked() != "/" {
                location.navigate("/", false);
            }
            return;
        }
        if typing {
            return;
        }
        let on_review = location.path.get_untracked().starts_with("/reviews/");
        let handled = match key.as_str() {
            "?" => {
                help.update(|h| *h = !*h);
                true
            }
            "/" => focus_by_id("search"),
            "j" => move_selection(1),
            "k" => move_selection(-1),
            "a" if on_review => click_by_id("approve"),
            "r" if on_review => focus_by_id("reason"),
            _ => false,
        };
        if handled {
            event.prevent_default();
        }
    });
    on_cleanup(move || handle.remove());
}

fn document() -> Option<web_sys::Document> {
    web_sys::window().and_then(|w| w.document())
}

fn element_by_id(id: &str) -> Option<web_sys::HtmlElement> {
    document()?.get_element_by_id(id)?.dyn_into().ok()
}

fn focus_by_id(id: &str) -> bool {
    element_by_id(id).is_some_and(|el| el.focus().is_ok())
}

fn click_by_id(id: &str) -> bool {
    match element_by_id(id) {
        Some(el) if !el.has_attribute("disabled") => {
            el.click();
            true
        }
        _ => false,
    }
}

fn blur_active() {
    if let Some(el) = document()
        .and_then(|d| d.active_element())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.blur();
    }
}

/// Moves focus to the next (`step` = 1) or previous (-1) review row link.
fn move_selection(step: i32) -> bool {
    let Some(document) = document() else {
        return false;
    };
    let Ok(links) = document.query_selector_all("a.review-link") else {
        return false;
    };
    let count = links.length() as i32;
    if count == 0 {
        return false;
    }
    let active = document.active_element();
    let current = (0..count).find(|&i| {
        links
            .item(i as u32)
            .zip(active.clone())
            .is_some_and(|(node, el)| node.is_same_node(Some(el.as_ref())))
    });
    let next = match current {
        Some(i) => (i + step).clamp(0, count - 1),
        None if step > 0 => 0,
        None => count - 1,
    };
    links
        .item(next as u32)
        .and_then(|n| n.dyn_into::<web_sys::HtmlElement>().ok())
        .is_some_and(|el| {
            el.scroll_into_view_with_bool(false);
            el.focus().is_ok()
        })
}
