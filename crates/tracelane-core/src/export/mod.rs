//! One exporter for every report: the CLI, the page and the golden tests
//! call these, so what a user gets from either is byte-equal. The op table
//! has its own writers ([`ops`]: CSV, Markdown, JSON, a text grid); every
//! other report becomes [`Section`]s printed by one printer ([`section`]),
//! and JSON where the CLI gives it. One module per report family.

pub mod device_time;
pub mod devices;
pub mod diff;
pub mod insights;
pub mod memory;
pub mod memory_snapshot;
pub mod memory_snapshot_compare;
pub mod ops;
pub mod ranks;
pub mod regions;
pub mod section;
pub mod xla_ops;

pub use crate::numbers::{fmt_count, fmt_ns, fmt_si, pct};
pub use device_time::*;
pub use devices::*;
pub use diff::*;
pub use insights::*;
pub use memory::*;
pub use ops::*;
pub use ranks::*;
pub use regions::*;
pub use section::*;
pub use xla_ops::*;
