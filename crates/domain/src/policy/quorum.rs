//! Where a review stands under its rule ("1 of 2 approvals — approved by
//! `alice` as security_officer; needs one more from release_manager"), and
//! whether one more approval is allowed by it.

use super::Rule;
use crate::model::DecisionStatus;
use crate::review::KeyRef;
use crate::toolcall::{ToolChoice, ToolMode};
use crate::{MplpId, Review};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One approval that counts towards a quorum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// The decision.
    pub decision_id: MplpId,
    /// Who approved, as people read it: the signed-in person, else the
    /// key's owner, else the key (else the role, for decisions no key was
    /// recorded for).
    pub person: String,
    /// The key or session that approved, when one was recorded: what tells
    /// one person from another.
    pub by: Option<KeyRef>,
    /// The role they approved as.
    pub role: String,
}

/// A review's approvals in its current round, against what its rule needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The rule's name.
    pub rule: String,
    /// How many approvals it needs.
    pub needed: u32,
    /// The approvals given so far.
    pub approvals: Vec<Approval>,
    /// Required roles none of the approvals covers yet.
    pub missing_roles: Vec<String>,
}

/// Why a rule refuses an approval. Travels as `{"kind", "detail"}` like the
/// other decision refusals.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum PolicyRefusal {
    /// The same person approved already.
    #[error("`{person}` already approved this request: rule `{rule}` needs approvals from different people")]
    SameReviewer {
        /// Who tried again.
        person: String,
        /// The rule.
        rule: String,
    },
    /// The owner of the asking agent's key tried to approve.
    #[error("`{person}` asked for this request through their agent: rule `{rule}` forbids approving your own request, so someone else must")]
    SelfApproval {
        /// The requester's owner.
        person: String,
        /// The rule.
        rule: String,
    },
    /// Approving as this role would leave no room for a required one.
    #[error("rule `{rule}` still needs an approval from {}: approve as {}, or leave this approval to someone who can", roles.join(" and "), roles.join(" or "))]
    RoleMissing {
        /// The rule.
        rule: String,
        /// The roles that would be left uncovered.
        roles: Vec<String>,
    },
    /// An edit or a standing grant under a rule that needs several approvals.
    #[error("rule `{rule}` needs {needed} approvals of the same call: approve it once, without modifications or a standing grant")]
    OnlyOnce {
        /// The rule.
        rule: String,
        /// How many approvals it needs.
        needed: u32,
    },
}

impl Standing {
    /// Where `review` stands under `rule`.
    pub fn of(review: &Review, rule: &Rule) -> Standing {
        let approvals: Vec<Approval> = review
            .current_round()
            .iter()
            .filter(|d| d.status == DecisionStatus::Approved)
            .map(|d| {
                let by = review.decider_of(d.decision_id).map(|k| k.key_ref());
                Approval {
                    decision_id: d.decision_id,
                    person: by
                        .as_ref()
                        .map_or_else(|| d.decided_by_role.clone(), |k| k.person().to_owned()),
                    by,
                    role: d.decided_by_role.clone(),
                }
            })
            .collect();
        let missing_roles = rule
            .required_roles
            .iter()
            .filter(|r| !approvals.iter().any(|a| &a.role == *r))
            .cloned()
            .collect();
        Standing {
            rule: rule.name.clone(),
            needed: rule.approvals,
            approvals,
            missing_roles,
        }
    }

    /// Whether the quorum is met.
    pub fn is_met(&self) -> bool {
        self.given() >= self.needed && self.missing_roles.is_empty()
    }

    /// How many approvals are still needed.
    pub fn remaining(&self) -> u32 {
        self.needed.saturating_sub(self.given())
    }

    fn given(&self) -> u32 {
        u32::try_from(self.approvals.len()).unwrap_or(u32::MAX)
    }

    /// Whether one more approval by `reviewer` as `role` is allowed (the
    /// same person twice, by any key or session, the requester's owner, a required role crowded
    /// out, an edit or grant under a quorum are not).
    pub fn admits(
        &self,
        review: &Review,
        rule: &Rule,
        reviewer: &KeyRef,
        role: &str,
        choice: Option<&ToolChoice>,
    ) -> Result<(), PolicyRefusal> {
        let person = reviewer.person();
        let same = |other: &KeyRef| other.is_same_person(reviewer);
        if self
            .approvals
            .iter()
            .any(|a| a.by.as_ref().is_some_and(same))
        {
            return Err(PolicyRefusal::SameReviewer {
                person: person.to_owned(),
                rule: rule.name.clone(),
            });
        }
        let risk = review.tool_call().map(|c| c.request.risk_tier);
        if rule.forbids_self_approval(risk) && review.requester.as_ref().is_some_and(same) {
            return Err(PolicyRefusal::SelfApproval {
                person: person.to_owned(),
                rule: rule.name.clone(),
            });
        }
        let left: Vec<String> = self
            .missing_roles
            .iter()
            .filter(|r| r.as_str() != role)
            .cloned()
            .collect();
        if left.len() > self.remaining().saturating_sub(1) as usize {
            return Err(PolicyRefusal::RoleMissing {
                rule: rule.name.clone(),
                roles: left,
            });
        }
        let mode = choice.and_then(|c| c.mode);
        if rule.needs_quorum() && matches!(mode, Some(ToolMode::Scope | ToolMode::Edit)) {
            return Err(PolicyRefusal::OnlyOnce {
                rule: rule.name.clone(),
                needed: rule.approvals,
            });
        }
        Ok(())
    }
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} approvals", self.given(), self.needed)?;
        let by: Vec<String> = self
            .approvals
            .iter()
            .map(|a| format!("`{}` as {}", a.person, a.role))
            .collect();
        if !by.is_empty() {
            write!(f, " — approved by {}", by.join(", "))?;
        }
        let remaining = self.remaining();
        if remaining == 0 && self.missing_roles.is_empty() {
            return Ok(());
        }
        f.write_str(if by.is_empty() {
            " — needs "
        } else {
            "; needs "
        })?;
        match remaining {
            0 | 1 => f.write_str("one more")?,
            n => write!(f, "{n} more")?,
        }
        let roles = self.missing_roles.join(" and ");
        match self.missing_roles.len() {
            0 => f.write_str(if remaining > 1 {
                " approvals"
            } else {
                " approval"
            }),
            n if n as u32 >= remaining => write!(f, " from {roles}"),
            _ => write!(f, ", including {roles}"),
        }
    }
}
