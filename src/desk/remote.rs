//! Following a server (Countersign's live stream, or LangGraph's threads): only
//! a reviewer who connected needs this code, so it is a split point.

use super::{Desk, Link};
use crate::split::{on_demand, LoadFailed};
use crate::store::HttpStore;
use leptos::prelude::*;

on_demand! {
    /// Loads the server's reviews and follows its live stream.
    in remote fn follow_server(desk: Desk, server: HttpStore) -> () {
        crate::live::connect(desk, server)
    }
}

on_demand! {
    /// Lists LangGraph's interrupted threads now and every few seconds after.
    in remote fn follow_threads(desk: Desk) -> () {
        desk.follow_langgraph()
    }
}

impl Desk {
    /// Starts following the saved server once its code is here.
    pub(super) fn follow_remote(self, server: Option<HttpStore>) {
        leptos::task::spawn_local(async move {
            let started = match server {
                Some(server) => follow_server(self, server).await,
                None => follow_threads(self).await,
            };
            if let Err(LoadFailed) = started {
                self.link.set(Link::Offline(
                    "the app's code for following the server could not be loaded".to_owned(),
                ));
            }
        });
    }
}
