//! Fuzzes the importer end to end: any bytes, fed whole and in chunks, must
//! give the same result, never panic, and a model that passes the op table.
//! Run: `cd fuzz && cargo +nightly fuzz run import corpus/import seeds/import -- -max_total_time=600`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelane_core::ops::{op_table, OpTableOptions};
use tracelane_core::{import_bytes, ImportOptions, Importer};

fuzz_target!(|data: &[u8]| {
    let opts = ImportOptions { max_json_bytes: 8 << 20 };
    let whole = import_bytes(data, opts);
    // The same bytes in chunks whose size comes from the input itself.
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize % 17;
    let mut imp = Importer::new(opts);
    let mut pushed = Ok(());
    for c in data.chunks(chunk) {
        pushed = imp.push(c);
        if pushed.is_err() {
            break;
        }
    }
    let chunked = pushed.and_then(|()| imp.finish());
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.slices.start_ns, b.slices.start_ns);
            assert_eq!(a.slices.dur_ns, b.slices.dur_ns);
            assert_eq!(a.diagnostics.links, b.diagnostics.links);
            let ta = op_table(a, OpTableOptions { by_shape: true, range_ns: None });
            let tb = op_table(b, OpTableOptions { by_shape: true, range_ns: None });
            assert_eq!(ta, tb);
            for i in 0..a.slices.len() {
                let _ = a.slice_args_json(i);
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string().is_empty(), b.to_string().is_empty()),
        (a, b) => panic!("whole and chunked imports disagree: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
    }
});
