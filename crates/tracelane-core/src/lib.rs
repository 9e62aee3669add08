//! tracelane's core: the trace model, importers, CPU→runtime→device linking
//! and PyTorch's op table — everything that runs natively, with no web
//! dependency, so the browser app and the CLI show the same numbers.
//!
//! How a trace flows through it:
//!
//! ```text
//! bytes ──► import::Importer (sniff, gunzip, stream-parse Chrome JSON)
//!       ──► model::Trace (columnar slices per track, interned strings, i64 ns)
//!       ──► link (device event → runtime call → cpu_op), counted in Diagnostics
//!       ──► analysis::* (op table with key_averages semantics, chain, compare,
//!           each a function of the trace and a scope) ──► reports for the CLI / app
//! ```
//!
//! ```
//! use tracelane_core::{import_bytes, ImportOptions, analysis::ops::{op_table, OpTableOptions}};
//! let json = br#"{"traceEvents":[
//!   {"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":10.0,"dur":5.5,
//!    "args":{"External id":7}}]}"#;
//! let trace = import_bytes(json, ImportOptions::default()).unwrap();
//! let table = op_table(&trace, OpTableOptions::default());
//! assert_eq!(table.rows[0].name, "aten::mul");
//! assert_eq!(table.rows[0].cpu_total_ns, 5_500);
//! ```

pub mod analysis;
pub mod category;
pub mod columnar;
pub mod default_column;
pub mod device_profile;
pub mod distributed;
pub mod error;
pub mod export;
pub mod ids;
pub mod import;
pub mod link;
pub mod memory_snapshot;
pub mod memory_timeline;
pub mod model;
pub mod neuron_system;
pub mod numbers;
pub mod packed_args;
pub mod pickle;
pub mod sort;
pub mod stack;
pub mod synth;
pub mod timeline;
pub mod warnings;
mod wire;
pub mod xla;
pub mod xla_cost;

pub use error::{Diagnostics, ImportError};
pub use import::{import_bytes, ImportOptions, Importer};
pub use model::Trace;
