//! The tracelane web app: a thin shell over `tracelane-core`.
//!
//! Split by where code runs:
//! - [`shared`]: what both threads use and needs no browser — the messages
//!   ([`shared::protocol`]), the summary of a trace, the op table's
//!   presentation, the timeline model — tested natively;
//! - `page` (wasm): the leptos app on the main thread and its client of the
//!   workers;
//! - `worker` (wasm): the Web Worker that imports, keeps the models, answers
//!   questions and paints the timeline;
//! - `decoder` (wasm): the worker the import worker starts to decode a
//!   device profile's Parquet tables (its own module: downloaded only then);
//! - `ranks_worker` (wasm): the pool of workers that summarise the ranks of
//!   a distributed run and combine them (its own module: downloaded only
//!   when a run is opened);
//! - `transfer`, `js` (wasm): the messages that carry JavaScript objects.

pub mod shared;

#[cfg(target_arch = "wasm32")]
pub mod alloc;
#[cfg(target_arch = "wasm32")]
pub mod decoder;
#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
pub mod page;
#[cfg(target_arch = "wasm32")]
pub mod ranks_worker;
#[cfg(target_arch = "wasm32")]
pub mod transfer;
#[cfg(target_arch = "wasm32")]
pub mod worker;

/// Built-in demo traces (real fixtures, embedded so the first visit needs
/// no network): `(file name, bytes)`.
pub const DEMO_TRACES: &[(&str, &[u8])] = &[
    (
        "rmsnorm_naive_cpu.pt.trace.json.gz",
        include_bytes!("../tests/fixtures/torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz"),
    ),
    (
        "rmsnorm_fused_cpu.pt.trace.json.gz",
        include_bytes!("../tests/fixtures/torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz"),
    ),
    (
        "rmsnorm_compiled_cpu.pt.trace.json.gz",
        include_bytes!("../tests/fixtures/torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz"),
    ),
    (
        "hta_amd_mi250_rocm.json.gz",
        include_bytes!("../tests/fixtures/public/hta_amd_mi250_rocm.json.gz"),
    ),
];
