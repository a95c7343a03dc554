//! A Countersign server's approval policy and who this reviewer is to it,
//! read once when the desk connects: the review page shows where a request
//! stands under its rule, and a decision the rule refuses (the same person
//! twice, a required role crowded out, one's own agent's request) is refused
//! here before it is sent. The server checks every decision again.

use super::Decisions;
use crate::backend::HttpStore;
use crate::desk::notices::Notices;
use countersign_domain::policy::{Policy, Rule, Standing};
use countersign_domain::wire::Me;
use countersign_domain::{
    decide, decide_under, Channel, DecideError, DecisionInput, IdSource, Judge, Review,
};
use leptos::prelude::*;
use std::sync::Arc;

/// The server's policy and the calling key.
#[derive(Debug)]
pub struct Judging {
    policy: Policy,
    me: Me,
}

impl Decisions {
    /// Reads the server's policy and this key's identity; a failure is told
    /// (the server still enforces the policy on every decision).
    pub(in crate::desk) fn load_judging(self, server: HttpStore, notices: Notices) {
        leptos::task::spawn_local(async move {
            let read = async {
                Ok::<_, crate::backend::HttpError>((server.policy().await?, server.me().await?))
            };
            match read.await {
                Ok((policy, me)) => self.judging.set(Some(Arc::new(Judging { policy, me }))),
                Err(e) => notices.tell(format!(
                    "The server's approval policy could not be read ({e}); the server still checks every decision against it."
                )),
            }
        });
    }

    /// The rule that governs `review` and where it stands under it, when the
    /// rule asks more than one plain approval (reactive).
    pub fn standing(&self, review: &Review) -> Option<(Rule, Standing)> {
        let judging = self.judging.get()?;
        let rule = judging.policy.rule_for(review).into_owned();
        rule.needs_quorum().then(|| {
            let standing = Standing::of(review, &rule);
            (rule, standing)
        })
    }

    /// The roles this reviewer's key may sign as, once the server said
    /// (reactive): the decision form offers these instead of a text field.
    pub fn signing_roles(&self) -> Option<Vec<String>> {
        self.judging
            .get()
            .map(|judging| judging.me.roles.clone())
            .filter(|roles| !roles.is_empty())
    }

    /// The domain's decision, under the server's rule for `review` once the
    /// policy is known.
    pub(in crate::desk) fn judge(
        &self,
        review: &Review,
        input: &DecisionInput,
        ids: &mut impl IdSource,
    ) -> Result<Review, DecideError> {
        let now = crate::browser::now();
        match self.judging.get_untracked() {
            Some(judging) => {
                let rule = judging.policy.rule_for(review);
                let judge = Judge {
                    rule: &rule,
                    reviewer: &judging.me.key,
                    channel: Some(Channel::Desk),
                };
                decide_under(review, input, judge, now, ids)
            }
            None => decide(review, input, now, ids),
        }
    }
}
