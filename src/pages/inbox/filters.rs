//! The inbox's filters as its URL says them (`/?status=all&q=…&page=2`):
//! read from the query string, written back to it, and turned into what the
//! desk is asked for.

use crate::desk::Ask;
use crate::router::Location;
use countersign_domain::model::{ConfirmStatus, TargetType};
use countersign_domain::wire::{Order, ReviewQuery};

/// The inbox's filters, read from and written to the query string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Filters {
    /// `None` = all statuses.
    pub(super) status: Option<ConfirmStatus>,
    pub(super) target_type: Option<TargetType>,
    pub(super) requester: Option<String>,
    pub(super) text: String,
    pub(super) order: Order,
    pub(super) page: usize,
    /// Where a server's page starts (`after` in the URL).
    pub(super) cursor: Option<String>,
}

/// Shows the inbox with other filters: they go in the URL, in place of the
/// current history entry.
#[derive(Clone, Copy)]
pub(super) struct Go(pub(super) Location);

impl Go {
    pub(super) fn run(self, filters: Filters) {
        self.0.navigate(&filters.to_query(), true);
    }
}

impl Filters {
    pub(super) fn from_query(get: impl Fn(&str) -> Option<String>) -> Self {
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
            order: get("sort")
                .and_then(|s| Order::from_wire(&s))
                .unwrap_or(Order::Expiring),
            page: get("page")
                .and_then(|p| p.parse::<usize>().ok())
                .unwrap_or(1)
                .max(1),
            cursor: get("after").filter(|c| !c.is_empty()),
        }
    }

    /// What the desk is asked for.
    pub(super) fn ask(&self) -> Ask {
        Ask {
            query: ReviewQuery {
                status: self.status,
                target_type: self.target_type,
                requester: self.requester.clone(),
                text: self.text.clone(),
                order: self.order,
                cursor: self.cursor.clone(),
                limit: 0,
            },
            page: self.page,
        }
    }

    /// The same filters from their first page.
    pub(super) fn first_page(self) -> Filters {
        Filters {
            page: 1,
            cursor: None,
            ..self
        }
    }

    pub(super) fn to_query(&self) -> String {
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
        if self.order != Order::Expiring {
            parts.push(format!("sort={}", self.order.as_str()));
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
    fn default_is_pending_what_expires_first() {
        let f = parse(&[]);
        assert_eq!(f.status, Some(ConfirmStatus::Pending));
        assert_eq!(f.order, Order::Expiring);
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
            order: Order::Newest,
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
