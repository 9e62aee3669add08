//! One module per command; each `run`s it from the parsed flags.

pub(crate) mod analyze;
pub(crate) mod bench;
pub(crate) mod compare;
pub(crate) mod diff;
pub(crate) mod engines;
pub(crate) mod export;
pub(crate) mod gate;
pub(crate) mod info;
pub(crate) mod insights;
pub(crate) mod memory;
pub(crate) mod ops;
pub(crate) mod ranks;
pub(crate) mod regions;
pub(crate) mod roofline;
pub(crate) mod synth;
