//! The flash model: geometry, bit modes, timing parameters, wear and error physics, and
//! failures. It knows nothing of the FTL above it.

pub mod array;
pub mod failure;
pub mod geometry;
pub mod mode;
pub mod oxide;
pub mod page_errors;
pub mod rber;
pub mod wear;

pub use array::{ArrayTimes, EraseStatus, FlashArray, ProgramStatus};
pub use geometry::Geometry;
pub use mode::{BitMode, ModeParams};
