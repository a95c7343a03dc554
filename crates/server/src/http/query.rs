//! The one query-string parser of the API: percent-decoded pairs (by the
//! `form_urlencoded` crate), with any parameter the endpoint does not take
//! refused by name, so a typo never passes as "no filter".

use super::error::{ApiError, Detail, ErrorCode};
use std::collections::HashMap;

/// The parameters of a query string, each decoded.
pub struct Params(HashMap<String, String>);

impl Params {
    /// Parses `a=1&b=2`, refusing parameters not in `known` (all of them named).
    pub fn parse(raw: Option<&str>, known: &[&str]) -> Result<Params, ApiError> {
        let mut params = HashMap::new();
        let mut unknown = Vec::new();
        for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
            if known.contains(&key.as_ref()) {
                params.insert(key.into_owned(), value.into_owned());
            } else {
                unknown.push(Detail::new(
                    key.into_owned(),
                    format!(
                        "unknown parameter; this endpoint takes: {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        if unknown.is_empty() {
            Ok(Params(params))
        } else {
            Err(ApiError::bad_request(
                ErrorCode::UnknownParameter,
                "the query has unknown parameters",
            )
            .with_details(unknown))
        }
    }

    /// One parameter's value, if given.
    pub fn get(&self, name: &str) -> Option<&String> {
        self.0.get(name)
    }

    /// One parameter of a raw query string, decoded (for the extractor that
    /// reads only the event stream's ticket).
    pub fn find(raw: &str, name: &str) -> Option<String> {
        form_urlencoded::parse(raw.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    }
}
