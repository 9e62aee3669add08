//! Fuzzes the importer end to end: any bytes, fed whole and in chunks, must
//! give the same result, never panic, and a model that passes the op table;
//! and split at an event boundary as the browser's two workers split a file
//! (the later part parsed apart, encoded, merged — or refused and read on),
//! they must give the whole import's result too. Args text is kept or left
//! in the source (then read back from each event's range) as the input's
//! length decides.
//! Run: `cd fuzz && mkdir -p corpus/import && cargo +nightly fuzz run import corpus/import seeds/import -- -max_total_time=600`
//! (`corpus/` is not committed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelane_core::import::{event_args, event_boundary, import_in_two, PartCarry};
use tracelane_core::analysis::ops::{op_table, OpTable, OpTableOptions};
use tracelane_core::{import_bytes, ImportError, ImportOptions, Importer, Trace};

fn shape_table(t: &Trace) -> OpTable {
    op_table(
        t,
        OpTableOptions {
            by_shape: true,
            range_ns: None,
        },
    )
}

/// The browser's split import of `bytes` cut at `cut`.
fn split_import(bytes: &[u8], cut: usize, opts: ImportOptions) -> Result<Trace, ImportError> {
    import_in_two(bytes, cut, opts, PartCarry::Encoded, usize::MAX).map(|two| two.trace)
}

fuzz_target!(|data: &[u8]| {
    let opts = ImportOptions {
        max_json_bytes: 8 << 20,
        // Both ways of keeping args, chosen by the input itself.
        args_in_source: data.len() % 2 == 1,
    };
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
            assert_eq!(shape_table(a), shape_table(b));
            for i in 0..a.slices.len() {
                let _ = a.slice_args_json(i);
                if a.args_in_source {
                    // The source range of plain input is a range of `data`.
                    let (off, len) = a.slices.source[i];
                    let event = &data[off as usize..off as usize + len as usize];
                    let _ = event_args(event);
                }
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string().is_empty(), b.to_string().is_empty()),
        (a, b) => panic!(
            "whole and chunked imports disagree: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }

    // Leading whitespace (valid JSON) lets the format be decided before the
    // cut, as it is for the large files the browser splits.
    const PAD: usize = 64 << 10;
    let mut padded = vec![b' '; PAD];
    padded.extend_from_slice(data);
    if let Some(k) = event_boundary(data) {
        let whole = import_bytes(&padded, opts);
        let split = split_import(&padded, PAD + k, opts);
        match (&whole, &split) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.slices.start_ns, b.slices.start_ns);
                assert_eq!(a.slices.dur_ns, b.slices.dur_ns);
                assert_eq!(a.slices.source, b.slices.source);
                // Everything counted alike; a warning's example may be cut
                // where the bytes were (as with chunks).
                let counts = |t: &Trace| {
                    let d = &t.diagnostics;
                    let w: Vec<(&str, u64)> =
                        d.warnings.iter().map(|(k, w)| (*k, w.count)).collect();
                    (
                        w,
                        d.events_by_phase.clone(),
                        d.events_by_category.clone(),
                        d.links.clone(),
                        d.bytes_read,
                        d.truncated,
                    )
                };
                assert_eq!(counts(a), counts(b));
                assert_eq!(shape_table(a), shape_table(b));
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            (a, b) => panic!(
                "whole and split imports disagree: {:?} vs {:?}",
                a.as_ref().err(),
                b.as_ref().err()
            ),
        }
    }
});
