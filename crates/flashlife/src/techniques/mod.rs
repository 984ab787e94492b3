//! Self-contained building blocks of the published techniques (design section 3), kept free of
//! FTL state so that they can be tested exhaustively on their own and wired in by the FTL.

pub mod bpht;
pub mod wom;
pub mod zombie;
