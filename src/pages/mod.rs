//! One module per screen.

mod deliveries;
pub mod grants;
pub mod import;
pub mod inbox;
pub mod on_demand;
pub mod review;
pub mod settings;
