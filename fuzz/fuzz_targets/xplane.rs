//! Fuzzes the XPlane reader: any bytes after an XPlane's first bytes, fed
//! whole and in chunks, give the same model, args (valid JSON) and op
//! tables, never a panic; the op tables and the analyses run on whatever
//! was read.
//! Run: `cd fuzz && mkdir -p corpus/xplane && cargo +nightly fuzz run xplane corpus/xplane seeds/xplane -- -max_total_time=600`
//! (`corpus/` is not committed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelane_core::analysis::xla_ops::xla_op_stats;
use tracelane_core::{import_bytes, ImportOptions, Importer};

fuzz_target!(|data: &[u8]| {
    // An empty first plane (`/device:GPU:0`) so that the bytes after it
    // are read as an XSpace's, whatever they are.
    let mut bytes = b"\x0a\x0f\x12\x0d/device:GPU:0".to_vec();
    bytes.extend_from_slice(data);
    let opts = ImportOptions {
        max_json_bytes: 8 << 20,
        args_in_source: false,
    };
    let whole = import_bytes(&bytes, opts);
    let chunk = 1 + data.first().copied().unwrap_or(0) as usize % 23;
    let mut imp = Importer::new(opts);
    let mut pushed = Ok(());
    for c in bytes.chunks(chunk) {
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
            assert_eq!(a.slices.name, b.slices.name);
            // Packed args are written out the same, as valid JSON.
            for i in 0..a.slices.len() {
                let args = a.slice_args_json(i);
                assert_eq!(args, b.slice_args_json(i));
                assert!(serde_json::from_str::<serde_json::Value>(&args).is_ok(), "{args}");
            }
            let (x, y) = (xla_op_stats(a), xla_op_stats(b));
            assert_eq!(x, y);
            let _ = tracelane_core::analysis::why_slow(
                a,
                &tracelane_core::analysis::Scope::Whole,
                tracelane_core::analysis::frame::Mode::Exact,
                &|i| a.slice_args_json(i).to_string(),
            );
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!(
            "whole and chunked imports disagree: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
});
