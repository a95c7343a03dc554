//! Pieces shared by the screens.

pub mod dag;
pub mod decision_form;
pub mod history;
pub mod status;
