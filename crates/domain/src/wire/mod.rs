//! The HTTP contract, typed once for the server, the app and `countersign
//! agent`: each type here is what travels between them (and, for the inbox's
//! stored head, between the app and its first paint).

mod device;
mod error;
mod event;
mod grant;
mod me;
mod outcome;
mod page;
mod receipt;
mod slack;
mod summary;
mod webhook;

pub use device::{Device, DeviceList, Paired, Pairing, PairingRequest};
pub use error::{Detail, ErrorBody, ErrorCode, ErrorReport, Refusal};
pub use event::{Change, ChangeKind, ChangePage};
pub use grant::{GrantList, GrantRecord};
pub use me::Me;
pub use outcome::{Answer, Outcome, Redeemed, Verdict};
pub use page::{
    InboxHead, Order, QueryProblem, Requesters, ReviewQuery, StatusCounts, SummaryPage, PAGE_SIZE,
};
pub use receipt::{
    Receipt, ReceiptBody, ReceiptDecision, ReceiptTarget, ReceiptToken, DEFAULT_RULE,
    RECEIPT_VERSION,
};
pub use slack::{SlackLink, SlackUser};
pub use summary::{CallKey, ReviewSummary, RowKind};
pub use webhook::{Delivery, DeliveryState, WebhookFormat, WebhookList, WebhookStatus};
