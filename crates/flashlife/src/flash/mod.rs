pub mod oxide;
pub mod rber;
