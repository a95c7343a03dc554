//! Text as reviewers are shown it, the same in the browser and on the server:
//! the small Markdown agents write (read into blocks, never into HTML), and
//! hidden or reordering characters made visible.

pub mod markdown;
pub mod reveal;
