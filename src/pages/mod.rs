//! One module per screen.

mod deliveries;
mod devices;
pub mod grants;
pub mod import;
pub mod inbox;
mod notifications;
pub mod on_demand;
pub mod pair;
pub mod review;
pub mod settings;
pub mod signin;
mod slack;
