//! Fuzzes the pickle decoder and the allocator snapshot reader: any bytes,
//! pushed whole and in chunks, must decode alike (or fail alike), never
//! panic, never run anything; a snapshot read must replay, report at a
//! moment and give its curves; imported, its memory report must hold. A
//! snapshot read goes through the encoding the browser's decoder worker
//! hands to the import worker and must come back the same; any bytes given
//! to that encoding's reader are refused or make a snapshot whose report
//! holds (`seeds/snapshot/*.tlsnap` are encoded snapshots); every device's
//! allocation bands build — whole, in a range, under a tight budget — and
//! raster a view, the drawn bands tiling the stack; the file streamed as
//! the browser's decoder reads it (`unpack_stream`, gzip inflated; an
//! archive member by member, its snapshot member decoded as it is read —
//! `seeds/snapshot/trace_with_snapshot.tar`) decodes to the whole read's
//! snapshot.
//! Run: `cd fuzz && mkdir -p corpus/snapshot && cargo +nightly fuzz run snapshot corpus/snapshot seeds/snapshot -- -max_total_time=600`
//! (`corpus/` is not committed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelane_core::memory_snapshot::{
    encoding, parts, read, report::snapshot_report, SnapshotReader,
};
use tracelane_core::{import_bytes, ImportOptions};

/// Bands of every device: built whole, in half the range and with two
/// bands at most; each rastered; at any moment the drawn bands are stacked
/// without gap or overlap.
fn bands(s: &tracelane_core::memory_snapshot::MemorySnapshot) {
    use tracelane_core::memory_snapshot::bands::{BandOptions, BandView, Bands};
    for d in 0..s.devices.len() {
        let whole = Bands::build(s, d, BandOptions::default());
        let half = (whole.from, whole.from + whole.to.saturating_sub(whole.from) / 2);
        for opts in [
            BandOptions::default(),
            BandOptions {
                range: Some(half),
                ..BandOptions::default()
            },
            BandOptions {
                max_bands: 2,
                max_pieces: 3,
                ..BandOptions::default()
            },
        ] {
            let b = Bands::build(s, d, opts);
            let cells = b.raster(&BandView {
                from: b.from,
                to: b.to,
                width: 7,
                height: 5,
                top: b.peak,
            });
            assert_eq!(cells.len(), 35);
            // Sizes at the ends of a u64 saturate the stack: not checked.
            let fits = b
                .bands
                .iter()
                .try_fold(0u64, |t, x| t.checked_add(x.size))
                .is_some();
            if !fits {
                continue;
            }
            let mid = b.from + b.to.saturating_sub(b.from) / 2;
            let mut live: Vec<(u64, u64)> = (0..b.bands.len())
                .filter_map(|k| b.offset_at(k, mid).map(|o| (o, b.bands[k].size)))
                .collect();
            live.sort();
            let mut at = 0u64;
            for (o, size) in live {
                assert_eq!(o, at, "bands stack without gap or overlap");
                at = at.saturating_add(size);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(s) = encoding::decode(data) {
        bands(&s);
        let t = tracelane_core::import::snapshot::trace_of(s);
        let _ = tracelane_core::analysis::memory::memory(
            &t,
            &tracelane_core::analysis::Scope::Whole,
            tracelane_core::analysis::memory::At::Peak,
        );
    }
    let _ = tracelane_core::pickle::decode(data, |_, _| ());
    let whole = read(data);
    let chunk = 1 + data.last().copied().unwrap_or(0) as usize % 13;
    let mut r = SnapshotReader::default();
    let mut pushed = Ok(());
    for c in data.chunks(chunk) {
        pushed = r.push(c);
        if pushed.is_err() {
            break;
        }
    }
    let chunked = pushed.and_then(|()| r.finish());
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.entries.action, b.entries.action);
            assert_eq!(a.entries.addr, b.entries.addr);
            assert_eq!(a.segments, b.segments);
            assert_eq!(a.stack_frames, b.stack_frames);
            let first = a.entries.time_us.first().copied().unwrap_or(0);
            let rep = snapshot_report(a, 0, Some(first), 5);
            let (lanes, _) = parts::lanes_and_report(a);
            assert_eq!(lanes.len(), a.devices.len());
            bands(a);
            let back = encoding::decode(&encoding::encode(a)).expect("an encoded snapshot decodes");
            assert_eq!(back.entries.action, a.entries.action);
            assert_eq!(back.entries.time_us, a.entries.time_us);
            assert_eq!(back.blocks, a.blocks);
            assert_eq!(snapshot_report(&back, 0, Some(first), 5), rep);
        }
        (Err(a), Err(b)) => assert_eq!(a.message.is_empty(), b.message.is_empty()),
        (a, b) => panic!(
            "whole and chunked snapshot reads disagree: {:?} vs {:?}",
            a.as_ref().err(),
            b.as_ref().err()
        ),
    }
    // The browser's decoder reads a dropped file as a stream (gzipped or
    // not): a snapshot it decodes is the whole read's; anything else goes
    // to the archive readers, which refuse it or open it.
    let streamed = tracelane_core::import::unpack_stream(
        std::io::Cursor::new(data),
        8 << 20,
        &mut |_| {},
    );
    use tracelane_core::import::{Streamed, Unpacked};
    if let (Ok(Streamed::Unpacked(Unpacked::Snapshot(s))), Ok(a)) = (&streamed, &whole) {
        assert_eq!(s.entries.action, a.entries.action);
        assert_eq!(s.entries.time_us, a.entries.time_us);
        assert_eq!(s.segments, a.segments);
    }
    let opts = ImportOptions {
        max_json_bytes: 8 << 20,
        args_in_source: false,
    };
    if let Ok(t) = import_bytes(data, opts) {
        let _ = tracelane_core::analysis::memory::memory(
            &t,
            &tracelane_core::analysis::Scope::Whole,
            tracelane_core::analysis::memory::At::Peak,
        );
    }
});
