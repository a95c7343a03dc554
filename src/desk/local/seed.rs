//! The demo reviews: stored on first start and by "Reset demo data". Their code
//! and text are a split point, fetched only when they are needed.

use super::Local;
use crate::backend::StoreError;
use crate::browser;
use crate::split::{on_demand, LoadFailed};
use countersign_domain::{demo, Review};

on_demand! {
    /// The demo reviews, requested relative to now.
    in demo fn demo_reviews() -> Result<Vec<Review>, String> {
        demo::reviews(browser::now())
    }
}

/// Why the demo reviews could not be given.
fn describe(_: LoadFailed) -> String {
    "The demo reviews could not be loaded: the app's server did not answer.".to_owned()
}

impl Local {
    /// First start: fetches the demo reviews, stores them and shows what storage
    /// then holds (without storage, shows them for this visit only). Until then
    /// the desk counts as reading, so exports, imports and decisions wait.
    pub(super) fn seed_demo(self) {
        leptos::task::spawn_local(async move {
            self.store_and_show_demo().await;
            self.reviews.done_reading();
        });
    }

    /// Stores the demo reviews and shows them; failures become notices.
    async fn store_and_show_demo(self) {
        let reviews = match demo_reviews().await {
            Ok(Ok(reviews)) => reviews,
            Ok(Err(e)) => return self.give_up_demo(e),
            Err(e) => return self.give_up_demo(describe(e)),
        };
        let Some(store) = self.reviews.local() else {
            return self.reviews.show(reviews);
        };
        match store.save_all(&reviews) {
            Ok(()) => {
                let _ = store.mark_seeded();
            }
            Err((saved, e)) => self
                .notices
                .tell(format!("Only {saved} demo review(s) could be stored: {e}")),
        }
        // What storage now holds is shown (or, if the reading code
        // cannot be fetched, the demo reviews just stored).
        match super::reading::read_stored(store.clone(), store.review_keys()).await {
            Ok(outcome) => {
                self.notices.set_aside(&outcome.set_aside);
                self.reviews.show(outcome.reviews);
            }
            Err(LoadFailed) => self.reviews.show(reviews),
        }
        browser::mark("countersign:reviews-read");
    }

    /// The demo could not be given: the rows listed for it from its summaries
    /// stand for nothing stored, so they go, and the reviewer is told why.
    fn give_up_demo(&self, why: String) {
        self.reviews.clear();
        self.notices.tell(why);
    }

    /// Replaces every review with fresh demo data.
    pub(in crate::desk) async fn reset_demo(&self) -> Result<(), StoreError> {
        let reviews = demo_reviews()
            .await
            .map_err(|e| StoreError::WriteFailed(describe(e)))?
            .map_err(StoreError::WriteFailed)?;
        if let Some(store) = self.reviews.local() {
            store.clear_reviews();
            store.save_all(&reviews).map_err(|(_, e)| e)?;
        }
        self.reviews.show(reviews);
        Ok(())
    }
}
