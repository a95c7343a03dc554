//! Following a server (Countersign's live stream, or LangGraph's threads): only
//! a reviewer who connected needs this code, so it is a split point.

use super::langgraph::Graph;
use super::served::{live, Served};
use super::{Link, Origin};
use crate::split::{on_demand, LoadFailed};
use leptos::prelude::*;

on_demand! {
    /// Loads the server's reviews and follows its live stream; reads its
    /// approval policy.
    in remote fn follow_server(served: Served) -> () {
        live::connect(served)
    }
}

on_demand! {
    /// Lists LangGraph's interrupted threads now and every few seconds after.
    in remote fn follow_threads(graph: Graph) -> () {
        graph.follow()
    }
}

/// How long a desk on a Countersign server waits for its first answer before
/// following the server anyway.
const FOLLOW_AT_THE_LATEST: std::time::Duration = std::time::Duration::from_secs(1);

/// Follows the server once it has answered the first request (its page, or
/// the review opened), or after a second: the first rows then never wait
/// behind the code that follows the server.
pub(super) fn server_once_answered(served: Served, origin: Origin) {
    leptos::task::spawn_local(async move {
        crate::browser::pause(FOLLOW_AT_THE_LATEST).await;
        served.first_answer();
    });
    let followed = StoredValue::new(false);
    Effect::new(move |_| {
        if served.has_answered() && !followed.get_value() {
            followed.set_value(true);
            started(follow_server(served), origin);
        }
    });
}

/// Lists LangGraph's threads once their code is here.
pub(super) fn threads(graph: Graph, origin: Origin) {
    started(follow_threads(graph), origin);
}

/// Says in the header when the code that follows the server could not be fetched.
fn started(
    following: impl std::future::Future<Output = Result<(), LoadFailed>> + 'static,
    origin: Origin,
) {
    leptos::task::spawn_local(async move {
        if let Err(LoadFailed) = following.await {
            origin.set_link(Link::Offline(
                "the app's code for following the server could not be loaded".to_owned(),
            ));
        }
    });
}
