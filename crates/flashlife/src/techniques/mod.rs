//! Self-contained building blocks of the published techniques (design section 3), kept free of
//! FTL state so that they can be tested exhaustively on their own and wired in by the FTL;
//! and the techniques' FTL policies (`reusable`), which drive the FTL through its hooks.

pub mod bpht;
pub mod ftpassd;
pub mod ftpassd_bench;
pub mod hot_cold;
pub mod readrelax;
pub mod reusable;
pub mod wom;
pub mod zombie;
