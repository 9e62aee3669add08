//! Fuzzes the import of a set of files that open as one trace (a
//! TorchNeuron run: trace.json, the Neuron profile, the framework mapping,
//! a summary JSON; a Neuron profile's tables; a PyTorch trace with its raw
//! memory timeline): the input is cut into files
//! at `\n--FILE--\n`, each named in turn from a TorchNeuron run's names, so
//! the set's classification, every Neuron reader, the mapping join and the
//! stack of two models, the memory timeline's reader and its join meet any
//! bytes. It must never panic, and an import that succeeds must give a
//! model the op table, the insights and the memory report run on.
//! Run: `cd fuzz && mkdir -p corpus/set && cargo +nightly fuzz run set corpus/set seeds/set -- -max_total_time=600`
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::analysis::memory::{memory, At};
use tracelane_core::analysis::{insights, Scope};
use tracelane_core::import::import_set;
use tracelane_core::ImportOptions;

const NAMES: &[&str] = &[
    "run/trace.json",
    "run/system_profile.json",
    "run/framework_mapping_20260101_000000_000.json",
    "run/summary.json",
    "run/nrt_events.json",
    "run/memory.raw.json.gz",
];

fuzz_target!(|data: &[u8]| {
    let mut files = Vec::new();
    let mut rest = data;
    let sep = b"\n--FILE--\n";
    loop {
        let at = rest.windows(sep.len()).position(|w| w == sep);
        let (file, next) = match at {
            Some(k) => (&rest[..k], Some(&rest[k + sep.len()..])),
            None => (rest, None),
        };
        files.push((NAMES[files.len() % NAMES.len()].to_string(), file.to_vec()));
        match next {
            Some(n) if files.len() < 8 => rest = n,
            _ => break,
        }
    }
    let opts = ImportOptions {
        max_json_bytes: 8 << 20,
        args_in_source: false,
    };
    if let Ok(t) = import_set(files, opts) {
        let _ = op_table(&t, OpTableOptions::default());
        let args = |i: usize| t.slice_args_json(i).to_string();
        let _ = insights::insights(&t, &Scope::Whole, &args);
        let _ = memory(&t, &Scope::Whole, At::Peak);
        let _ = memory(&t, &Scope::Whole, At::Time(data.len() as i64 * 1000));
    }
});
