//! Following a server (Countersign's live stream, or LangGraph's threads): only
//! a reviewer who connected needs this code, so it is a split point.

use super::{Desk, Link};
use crate::backend::HttpStore;
use crate::split::{on_demand, LoadFailed};

on_demand! {
    /// Loads the server's reviews and follows its live stream; reads its
    /// approval policy.
    in remote fn follow_server(desk: Desk, server: HttpStore) -> () {
        desk.decisions.load_judging(server.clone(), desk.notices);
        super::live::connect(desk, server)
    }
}

on_demand! {
    /// Lists LangGraph's interrupted threads now and every few seconds after.
    in remote fn follow_threads(desk: Desk) -> () {
        desk.follow_langgraph()
    }
}

/// How long a desk on a Countersign server waits for its first answer before
/// following the server anyway.
const FOLLOW_AT_THE_LATEST: std::time::Duration = std::time::Duration::from_secs(1);

impl Desk {
    /// Follows the server once it has answered the first request (its page,
    /// or the review opened), or after a second: the first rows then never
    /// wait behind the code that follows the server.
    pub(super) fn follow_after_first_answer(self, server: HttpStore) {
        self.origin.hold_unfollowed(server);
        leptos::task::spawn_local(async move {
            crate::browser::pause(FOLLOW_AT_THE_LATEST).await;
            self.start_following();
        });
    }

    /// Starts following the server unless it is followed already.
    pub(super) fn start_following(&self) {
        if let Some(server) = self.origin.take_unfollowed() {
            self.follow_remote(Some(server));
        }
    }

    /// Starts following the saved server once its code is here.
    pub(super) fn follow_remote(self, server: Option<HttpStore>) {
        leptos::task::spawn_local(async move {
            let started = match server {
                Some(server) => follow_server(self, server).await,
                None => follow_threads(self).await,
            };
            if let Err(LoadFailed) = started {
                self.origin.set_link(Link::Offline(
                    "the app's code for following the server could not be loaded".to_owned(),
                ));
            }
        });
    }
}
