//! One module per screen.

pub mod grants;
pub mod import;
pub mod inbox;
pub mod on_demand;
pub mod review;
pub mod settings;
