//! The tracelane web app: a thin shell over `tracelane-core`.
//!
//! The page (`web`, leptos) reads a dropped file in chunks and hands them to
//! a Web Worker (`worker`), which runs the core's importer and op table and
//! sends back a [`protocol::Summary`]. Everything that does not need a
//! browser — the messages, the summary, sorting, filtering, units and
//! exports — lives in plain modules here and is tested natively.

pub mod compare_view;
pub mod protocol;
pub mod table;
pub mod timeline_view;

#[cfg(target_arch = "wasm32")]
pub mod client;
#[cfg(target_arch = "wasm32")]
pub mod compare_page;
#[cfg(target_arch = "wasm32")]
pub mod gl;
#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
pub mod paint;
#[cfg(target_arch = "wasm32")]
pub mod timeline_page;
#[cfg(target_arch = "wasm32")]
pub mod transfer;
#[cfg(target_arch = "wasm32")]
pub mod web;
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
