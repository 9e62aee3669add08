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

/// Built-in demo traces (real fixtures, copied into the build's `demo/`
/// folder by Trunk — `index.html` — so they stay out of the page's wasm; the
/// service worker caches them with the app's own files, so the demo opens
/// offline too): file names, in tab order.
pub const DEMO_TRACES: &[&str] = &[
    "rmsnorm_naive_cpu.pt.trace.json.gz",
    "rmsnorm_fused_cpu.pt.trace.json.gz",
    "rmsnorm_compiled_cpu.pt.trace.json.gz",
    "hta_amd_mi250_rocm.json.gz",
    // Reconstructed from the TorchNeuron article's published figures, not
    // a capture (tests/fixtures/README.md): the page opens on its comparison.
    DEMO_NEURON,
];

/// Where the page fetches a demo trace (relative to the page).
pub fn demo_url(name: &str) -> String {
    format!("demo/{name}")
}

/// The demo trace the page opens on (the comparison of its three regions).
pub const DEMO_NEURON: &str = "torchneuron_rmsnorm.json";

/// Its regions: RMSNorm as six eager ops, `torch.rms_norm`, `torch.compile`.
pub const DEMO_NEURON_REGIONS: [&str; 3] = ["rmsnorm_naive", "rmsnorm_fused", "rmsnorm_compiled"];
