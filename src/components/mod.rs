//! Pieces shared by the screens.

pub mod args_editor;
pub mod call_group;
pub mod dag;
pub mod decision_form;
pub mod loaded;
pub mod tool_call;
