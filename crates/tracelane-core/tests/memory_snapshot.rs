//! Allocator snapshots recorded on an H200 (PyTorch 2.11, Python 3.12, by
//! `tools/gen_memory_oracles.py`; `tests/fixtures/memory-snapshots/
//! snapshots.json` holds what `torch.cuda` said when each was taken):
//! decoded by our own pickle decoder in every protocol, the allocator
//! replayed to PyTorch's own figures, each out-of-memory explained, and the
//! snapshot on the profiler trace's clock.

use tracelane_core::analysis::memory::{memory, At};
use tracelane_core::analysis::Scope;
use tracelane_core::import::import_set;
use tracelane_core::memory_snapshot::report::{snapshot_report, SnapshotDevice};
use tracelane_core::memory_snapshot::{read, Action, MemorySnapshot};
use tracelane_core::{import_bytes, ImportOptions};

fn fixture(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/../../tests/fixtures/memory-snapshots/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn oracle(case: &str, key: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_slice(&fixture("snapshots.json")).unwrap();
    v[case][key]
        .as_u64()
        .unwrap_or_else(|| panic!("{case}.{key}"))
}

fn snap(name: &str) -> MemorySnapshot {
    read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn device(name: &str) -> SnapshotDevice {
    let s = snap(name);
    let mut r = snapshot_report(&s, 0, None, 10);
    assert_eq!(r.devices.len(), 1, "{name}");
    r.devices.remove(0)
}

/// `pickle.dump` of the same snapshot in protocols 2–5 (memory_viz reads
/// 2–4 and fails on 5, pytorch#183842): one model whatever the protocol.
#[test]
fn every_pickle_protocol_decodes_to_the_same_snapshot() {
    // The four files are one later dump of the run (one entry more: the
    // `snapshot` marker of the dump before).
    let same = snap("snap_train_cuda.protocol4.pickle");
    let v: serde_json::Value = serde_json::from_slice(&fixture("snapshots.json")).unwrap();
    assert_eq!(
        same.entries.len() as u64,
        v["snap_train_cuda"]["device_traces_entries"][0]
            .as_u64()
            .unwrap()
    );
    for p in 2..=5 {
        let s = snap(&format!("snap_train_cuda.protocol{p}.pickle"));
        assert_eq!(s.diagnostics.protocol, p);
        assert_eq!(s.entries.action, same.entries.action, "protocol {p}");
        assert_eq!(s.entries.addr, same.entries.addr, "protocol {p}");
        assert_eq!(s.entries.size, same.entries.size, "protocol {p}");
        assert_eq!(s.entries.time_us, same.entries.time_us, "protocol {p}");
        assert_eq!(s.frames.len(), same.frames.len(), "protocol {p}");
        assert_eq!(s.stack_frames, same.stack_frames, "protocol {p}");
        assert_eq!(s.segments, same.segments, "protocol {p}");
        assert_eq!(s.blocks, same.blocks, "protocol {p}");
    }
    let base = snap("snap_train_cuda.pickle");
    // Python's pickle.load of the file: 104 alloc, 75 free_requested,
    // 75 free_completed, 8 segment_alloc; 8 segments.
    let count = |a: Action| base.entries.action.iter().filter(|&&x| x == a).count();
    assert_eq!(count(Action::Alloc), 104);
    assert_eq!(count(Action::FreeRequested), 75);
    assert_eq!(count(Action::FreeCompleted), 75);
    assert_eq!(count(Action::SegmentAlloc), 8);
    assert_eq!(
        base.segments.len() as u64,
        oracle("snap_train_cuda", "segments")
    );
    assert!(base.bytes_per_entry() <= 32.0, "{}", base.bytes_per_entry());
}

/// The replay rounds and splits blocks as the caching allocator does:
/// its peaks are `torch.cuda.max_memory_allocated()` and
/// `max_memory_reserved()`, its end `memory_allocated()`, to the byte, and
/// it ends in exactly the blocks the file lists.
#[test]
fn the_replayed_allocator_reaches_pytorchs_own_peaks_to_the_byte() {
    let d = device("snap_train_cuda.pickle");
    let o = |k| oracle("snap_train_cuda", k);
    assert_eq!(d.peak_allocated_bytes, o("max_memory_allocated"));
    assert_eq!(d.peak_reserved_bytes, o("max_memory_reserved"));
    assert_eq!(d.end_allocated_bytes, o("memory_allocated_at_dump"));
    assert_eq!(d.end_reserved_bytes, o("memory_reserved_at_dump"));
    assert_eq!(d.replay.end_differs, 0);
    assert_eq!(d.replay.alloc_conflicts + d.replay.free_unmatched, 0);
    let held: u64 = d.at_peak.holders.iter().map(|h| h.bytes).sum();
    assert_eq!(held, d.peak_allocated_bytes);
    assert_eq!(
        d.at_peak.free_bytes,
        d.at_peak.reserved_bytes - d.at_peak.allocated_bytes
    );
}

/// Expandable segments: pages mapped and unmapped; the replay still ends
/// in the file's blocks.
#[test]
fn expandable_segments_replay_to_the_files_state() {
    let d = device("snap_expandable_cuda.pickle");
    assert!(d.segment_allocs > 0 && d.segment_frees > 0);
    assert_eq!(d.replay.end_differs, 0);
    assert_eq!(d.replay.alloc_conflicts + d.replay.free_unmatched, 0);
    assert!(d.peak_reserved_bytes >= d.peak_allocated_bytes);
}

/// 200 MiB asked with 272 MiB free in reserved segments, in 20–32 MiB
/// pieces (the OOM message: "272.00 MiB is reserved by PyTorch but
/// unallocated"): fragmentation, and who holds the rest.
#[test]
fn an_oom_with_enough_free_bytes_in_pieces_is_fragmentation() {
    let d = device("snap_oom_fragmented_cuda.pickle");
    let o = |k| oracle("snap_oom_fragmented_cuda", k);
    assert_eq!(d.ooms.len(), 1);
    let oom = &d.ooms[0];
    assert_eq!(oom.cause, "fragmentation");
    assert_eq!(oom.request_bytes, o("request_bytes"));
    assert_eq!(oom.state.allocated_bytes, o("held_bytes"));
    assert_eq!(oom.state.free_bytes, 272 << 20);
    assert!(oom.state.largest_free_block < oom.request_bytes);
    assert!(oom.explanation.contains("expandable_segments"));
    assert!(oom.state.holders[0]
        .frame
        .contains("gen_memory_oracles.py:198"));
}

/// 400 MiB asked with nothing free in reserved segments while CUDA had
/// 138 GiB free: a cap on the process (set_per_process_memory_fraction,
/// 512 MiB), said as such.
#[test]
fn an_oom_with_nothing_free_under_a_cap_is_capacity_of_the_process() {
    let d = device("snap_oom_capacity_cuda.pickle");
    let o = |k| oracle("snap_oom_capacity_cuda", k);
    let oom = &d.ooms[0];
    assert_eq!(oom.cause, "capacity");
    assert_eq!(oom.request_bytes, o("request_bytes"));
    assert_eq!(oom.state.allocated_bytes, o("held_bytes"));
    assert_eq!(oom.state.free_bytes, 0);
    assert!(oom.device_free_bytes > oom.request_bytes);
    assert!(oom.explanation.contains("set_per_process_memory_fraction"));
}

/// `time_us` is epoch µs and the trace's `ts + baseTimeNanoseconds` epoch
/// ns: opened together, the snapshot's peak falls on the trace's own
/// `[memory]` peak (same bytes) within the snapshot's 1 µs resolution.
#[test]
fn a_snapshot_opened_with_its_trace_shares_the_traces_clock() {
    let files = vec![
        (
            "snap_train_cuda.pt.trace.json.gz".to_string(),
            fixture("snap_train_cuda.pt.trace.json.gz"),
        ),
        (
            "snap_train_cuda.pickle".to_string(),
            fixture("snap_train_cuda.pickle"),
        ),
    ];
    let t = import_set(files, ImportOptions::default()).unwrap();
    assert!(t.memory_snapshot.is_some());
    let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
    let cuda = r.devices.iter().find(|d| d.device == "CUDA:0").unwrap();
    let s = r.snapshot.as_ref().unwrap();
    let sd = &s.devices[0];
    assert_eq!(sd.peak_allocated_bytes as i64, cuda.peak_allocated_bytes);
    let snap_peak_us = (sd.peak_allocated_at_us - s.origin_us) as f64;
    assert!(
        (snap_peak_us - cuda.peak_at_us).abs() < 1.0,
        "{snap_peak_us} vs {}",
        cuda.peak_at_us
    );
    // The curves are lanes of the trace.
    let lanes: Vec<&str> = t.counters.series.iter().map(|&s| t.str(s)).collect();
    assert!(lanes.contains(&"memory allocated · CUDA:0"));
}

/// Opened alone (also gzipped), a snapshot is a trace of its own: its
/// curves on the timeline, its report in the memory view.
#[test]
fn a_snapshot_alone_opens_as_a_trace_and_gzip_is_inflated() {
    use std::io::Write;
    let raw = fixture("snap_oom_fragmented_cuda.pickle");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    for bytes in [raw.clone(), gz.finish().unwrap()] {
        let t = import_bytes(&bytes, ImportOptions::default()).unwrap();
        assert!(t.diagnostics.format.contains("allocator snapshot"));
        assert!(t.time_span_ns().is_some());
        let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
        assert_eq!(
            r.snapshot.unwrap().devices[0].ooms[0].cause,
            "fragmentation"
        );
    }
}

/// Cut anywhere after its first entries: what was read stays, and says so.
#[test]
fn a_truncated_snapshot_keeps_the_entries_read() {
    let raw = fixture("snap_train_cuda.pickle");
    let s = read(&raw[..raw.len() * 2 / 3]).unwrap();
    assert!(s.diagnostics.truncated.is_some());
    assert!(!s.entries.is_empty());
    assert_eq!(s.devices.len(), 1);
    let r = snapshot_report(&s, 0, None, 5);
    assert!(r.truncated.is_some());
}

/// Pickles that are not snapshots, or not data: a message, no panic.
#[test]
fn a_pickle_that_is_not_a_snapshot_says_why() {
    // pickle.dumps([1, 2], protocol=4) and a pickle calling posix.system.
    let list = [
        0x80, 4, 0x95, 5, 0, 0, 0, 0, 0, 0, 0, b']', 0x94, b'K', 1, b'a', b'.',
    ];
    let e = import_bytes(&list, ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("not an allocator snapshot"), "{e}");
    let evil = b"\x80\x04\x95\x22\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94\x93\x94\x8c\x07echo hi\x94\x85\x94R\x94.";
    let e = import_bytes(evil, ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("never runs"), "{e}");
}

/// The browser's decoder worker opens a snapshot (`unpack`) and hands it
/// to the import worker as bytes (`encoding`): what arrives is the
/// snapshot it decoded — the same columns, the same report to the byte.
/// A trace and its snapshot dropped together are a run: the decoder takes
/// the snapshot out, the import worker joins it to the run's trace, as
/// the CLI's `import_set` does.
#[test]
fn the_decoder_workers_snapshot_arrives_whole_and_joins_its_trace() {
    use tracelane_core::import::snapshot::{attach, trace_of};
    use tracelane_core::import::{run, unpack_stream, Streamed, Unpacked};
    use tracelane_core::memory_snapshot::encoding;
    // The decoder worker reads the file itself (`unpack_stream` over the
    // dropped Blob); the import worker only saw that it is one to hand over.
    let unpack = |bytes: &[u8], max: u64| {
        let mut first = tracelane_core::Importer::new(ImportOptions::default());
        first.leave_archives();
        first.push(&bytes[..bytes.len().min(1 << 20)]).unwrap();
        // Under 64 KiB (`format::DECIDE_BYTES`) the decision comes at the end.
        assert!(first.holds_archive() || bytes.len() < 64 << 10);
        assert!(matches!(
            first.finish_or_archive(),
            Ok(tracelane_core::import::Finished::Archive(kept)) if kept.is_empty()
        ));
        unpack_stream(std::io::Cursor::new(bytes), max, &mut |_| {})
    };
    for name in [
        "snap_oom_fragmented_cuda.pickle",
        "snap_oom_capacity_cuda.pickle",
        "snap_expandable_cuda.pickle",
        "snap_train_cuda.protocol5.pickle",
    ] {
        let raw = fixture(name);
        let Ok(Streamed::Unpacked(Unpacked::Snapshot(decoded))) = unpack(&raw, u64::MAX) else {
            panic!("{name}: the decoder worker decodes a snapshot")
        };
        let arrived = encoding::decode(&encoding::encode(&decoded)).expect(name);
        assert_eq!(arrived.entries.action, decoded.entries.action, "{name}");
        assert_eq!(arrived.entries.addr, decoded.entries.addr, "{name}");
        assert_eq!(arrived.entries.size, decoded.entries.size, "{name}");
        assert_eq!(arrived.entries.time_us, decoded.entries.time_us, "{name}");
        assert_eq!(arrived.entries.stream, decoded.entries.stream, "{name}");
        assert_eq!(arrived.entries.stack, decoded.entries.stack, "{name}");
        assert_eq!(arrived.stack_starts, decoded.stack_starts, "{name}");
        assert_eq!(arrived.stack_frames, decoded.stack_frames, "{name}");
        assert_eq!(arrived.devices, decoded.devices, "{name}");
        assert_eq!(arrived.segments, decoded.segments, "{name}");
        assert_eq!(arrived.blocks, decoded.blocks, "{name}");
        assert_eq!(arrived.settings, decoded.settings, "{name}");
        assert_eq!(arrived.annotations, decoded.annotations, "{name}");
        assert_eq!(arrived.diagnostics, decoded.diagnostics, "{name}");
        let frames = |s: &MemorySnapshot| -> Vec<String> {
            (0..s.frames.len() as u32)
                .map(|f| s.frame_text(f))
                .collect()
        };
        assert_eq!(frames(&arrived), frames(&decoded), "{name}");
        let here = trace_of(*decoded);
        let there = trace_of(arrived);
        assert_eq!(
            here.memory_snapshot_report, there.memory_snapshot_report,
            "{name}"
        );
        assert!(there.memory_snapshot_report.is_some());
    }
    let mut tar = Vec::new();
    for (name, bytes) in [
        (
            "snap_train_cuda.pt.trace.json.gz",
            fixture("snap_train_cuda.pt.trace.json.gz"),
        ),
        ("snap_train_cuda.pickle", fixture("snap_train_cuda.pickle")),
    ] {
        tar.extend(tracelane_core::import::archive::tar_header(
            name,
            bytes.len() as u64,
        ));
        let pad = tracelane_core::import::archive::tar_padding(bytes.len() as u64);
        tar.extend(bytes);
        tar.extend(std::iter::repeat_n(0u8, pad as usize));
    }
    tar.extend(tracelane_core::import::archive::TAR_END);
    // The snapshot member is decoded as it is read, the trace read whole:
    // the same files and snapshot as the whole tar's.
    let Streamed::Run(rest, snap) = unpack(&tar, u64::MAX).unwrap() else {
        panic!("a trace and its snapshot are a run")
    };
    let Ok(Unpacked::Run(files)) = tracelane_core::import::unpack(&tar, u64::MAX) else {
        panic!("the whole tar is a run")
    };
    let (whole_rest, whole_snap) = run::take_snapshot(files.clone()).unwrap();
    let whole_snap = whole_snap.expect("the run's snapshot");
    assert_eq!(rest, whole_rest);
    assert_eq!(snap.entries.time_us, whole_snap.entries.time_us);
    assert_eq!(snap.entries.addr, whole_snap.entries.addr);
    assert_eq!(snap.segments, whole_snap.segments);
    let tar_gz = {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar).unwrap();
        gz.finish().unwrap()
    };
    let Streamed::Run(from_gz, _) = unpack(&tar_gz, u64::MAX).unwrap() else {
        panic!("a gzipped tar is read member by member too")
    };
    assert_eq!(from_gz, rest);
    assert!(matches!(
        unpack(&tar_gz, 1000),
        Err(tracelane_core::ImportError::TooLarge { limit_bytes: 1000 })
    ));
    // The snapshot alone in an archive opens as the snapshot.
    let mut lone = tracelane_core::import::archive::tar_header("s.pickle", 6199).to_vec();
    lone.extend(fixture("snap_oom_fragmented_cuda.pickle"));
    lone.extend(std::iter::repeat_n(
        0u8,
        tracelane_core::import::archive::tar_padding(6199) as usize,
    ));
    lone.extend(tracelane_core::import::archive::TAR_END);
    assert!(matches!(
        unpack(&lone, u64::MAX),
        Ok(Streamed::Unpacked(Unpacked::Snapshot(_)))
    ));
    // The decoder worker's part, then the import worker's.
    let snap = encoding::decode(&encoding::encode(&snap)).unwrap();
    let mut t = run::import_run(rest, Default::default(), ImportOptions::default()).unwrap();
    attach(&mut t, snap);
    let joined = import_set(files, ImportOptions::default()).unwrap();
    assert_eq!(t.slices.len(), joined.slices.len());
    assert_eq!(t.memory_snapshot_report, joined.memory_snapshot_report);
    assert!(t.memory_snapshot_report.is_some() && t.slices.len() > 100);
    let at_peak = |t: &tracelane_core::Trace| {
        memory(t, &Scope::Whole, At::Peak)
            .unwrap()
            .snapshot
            .expect("the snapshot's report")
    };
    assert_eq!(at_peak(&t), at_peak(&joined));
}

/// A truncated snapshot whose entries' `time_us` run to the ends of an
/// i64 (found by the fuzzer): it opens with what was read, its curves and
/// report on the trace's clock, nothing overflows.
#[test]
fn a_snapshot_with_times_at_the_ends_of_i64_opens_without_overflow() {
    let p = format!(
        "{}/../../tests/fixtures/edge/snapshot_time_overflow.pickle",
        env!("CARGO_MANIFEST_DIR")
    );
    let raw = std::fs::read(&p).unwrap();
    if let Ok(t) = import_bytes(&raw, ImportOptions::default()) {
        let _ = memory(&t, &Scope::Whole, At::Peak);
        let _ = memory(&t, &Scope::Whole, At::Time(i64::MIN));
        let _ = memory(&t, &Scope::Whole, At::Time(i64::MAX));
    }
}

/// Columns as the decoder worker hands them over, with segment addresses
/// and sizes at the ends of a u64 (found by the fuzzer; a pickle can name
/// such integers too): the allocator replays them without overflowing.
#[test]
fn a_snapshot_with_addresses_at_the_ends_of_u64_replays_without_overflow() {
    for name in [
        "snapshot_encoded_overflow.tlsnap",
        "snapshot_encoded_overflow_holders.tlsnap",
    ] {
        let p = format!(
            "{}/../../tests/fixtures/edge/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let snap = tracelane_core::memory_snapshot::encoding::decode(&std::fs::read(&p).unwrap())
            .expect("the fuzzer's input decodes");
        let c = tracelane_core::memory_snapshot::compare::compare(("a", &snap), ("b", &snap));
        assert!(c
            .devices
            .iter()
            .all(|d| d.holders.iter().all(|h| h.change_bytes == 0)));
        let t = tracelane_core::import::snapshot::trace_of(snap);
        let _ = memory(&t, &Scope::Whole, At::Peak);
        let _ = tracelane_core::analysis::insights::insights(&t, &Scope::Whole, &|_| String::new());
    }
}

/// Two snapshots compared (`memory_snapshot::compare`): each side's
/// figures are what that snapshot alone reports (the training run's peak
/// PyTorch's own `max_memory_allocated()`), the changes are other minus
/// baseline, every holder of each peak is on its side (their bytes add up
/// to the peak), the largest change first; one run against a later dump of
/// itself changes nothing.
#[test]
fn two_snapshots_compared_change_by_the_programs_line() {
    use tracelane_core::memory_snapshot::compare::compare;
    let train = snap("snap_train_cuda.pickle");
    let expandable = snap("snap_expandable_cuda.pickle");
    let c = compare(("train", &train), ("expandable", &expandable));
    assert_eq!(
        (c.baseline.as_str(), c.other.as_str()),
        ("train", "expandable")
    );
    let d = &c.devices[0];
    let (a, b) = (d.baseline.as_ref().unwrap(), d.other.as_ref().unwrap());
    assert_eq!(
        a.peak_allocated_bytes,
        oracle("snap_train_cuda", "max_memory_allocated")
    );
    assert_eq!(
        a.peak_reserved_bytes,
        oracle("snap_train_cuda", "max_memory_reserved")
    );
    let alone = device("snap_expandable_cuda.pickle");
    assert_eq!(b.peak_allocated_bytes, alone.peak_allocated_bytes);
    assert_eq!(
        b.largest_free_block_at_peak,
        alone.at_peak.largest_free_block
    );
    let sum = |f: fn(&tracelane_core::memory_snapshot::compare::HolderChange) -> u64| {
        d.holders.iter().map(f).sum::<u64>()
    };
    assert_eq!(sum(|h| h.baseline_bytes), a.peak_allocated_bytes);
    assert_eq!(sum(|h| h.other_bytes), b.peak_allocated_bytes);
    for h in &d.holders {
        assert_eq!(
            h.change_bytes,
            h.other_bytes as i64 - h.baseline_bytes as i64
        );
    }
    assert!(d
        .holders
        .windows(2)
        .all(|w| w[0].change_bytes.abs() >= w[1].change_bytes.abs()));
    // Lines without a Python frame are one group on both sides.
    assert_eq!(
        d.holders
            .iter()
            .filter(|h| h.frame.starts_with("(no Python stack"))
            .count(),
        1
    );
    let later = snap("snap_train_cuda.protocol4.pickle");
    let same = compare(("train", &train), ("later dump", &later));
    let d = &same.devices[0];
    assert_eq!(
        d.baseline.as_ref().unwrap().peak_allocated_bytes,
        d.other.as_ref().unwrap().peak_allocated_bytes
    );
    assert!(
        d.holders.iter().all(|h| h.change_bytes == 0),
        "{:?}",
        d.holders
    );
    let ooms = compare(
        ("fragmented", &snap("snap_oom_fragmented_cuda.pickle")),
        ("capacity", &snap("snap_oom_capacity_cuda.pickle")),
    );
    let d = &ooms.devices[0];
    assert_eq!(
        (
            d.baseline.as_ref().unwrap().ooms,
            d.other.as_ref().unwrap().ooms
        ),
        (1, 1)
    );
}

/// The decoder worker reads a dropped snapshot from its file a chunk at a
/// time (`snapshot_stream`), never whole: plain or gzipped, every
/// protocol, it decodes to what the whole file decodes to; a gzip stream
/// cut short keeps what inflated and says the snapshot was truncated.
#[test]
fn a_snapshot_streamed_from_its_file_equals_the_whole_files() {
    use std::io::Write;
    use tracelane_core::import::snapshot_stream::{looks_like, read_stream};
    for p in 2..=5 {
        let raw = fixture(&format!("snap_train_cuda.protocol{p}.pickle"));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw).unwrap();
        let gz = gz.finish().unwrap();
        let whole = read(&raw).unwrap();
        for bytes in [&raw, &gz] {
            assert!(looks_like(&bytes[..bytes.len().min(4096)]), "protocol {p}");
            let mut last = 0;
            let s = read_stream(&bytes[..], u64::MAX, |n| last = n).unwrap();
            assert_eq!(last, bytes.len() as u64);
            assert_eq!(s.diagnostics.protocol, p);
            assert_eq!(s.entries.action, whole.entries.action);
            assert_eq!(s.entries.addr, whole.entries.addr);
            assert_eq!(s.entries.size, whole.entries.size);
            assert_eq!(s.entries.time_us, whole.entries.time_us);
            assert_eq!(s.stack_frames, whole.stack_frames);
            assert_eq!(s.segments, whole.segments);
            assert_eq!(s.blocks, whole.blocks);
            assert_eq!(s.diagnostics.bytes, whole.diagnostics.bytes);
            assert!(s.diagnostics.truncated.is_none());
        }
        let cut = read_stream(&gz[..gz.len() * 2 / 3], u64::MAX, |_| {}).unwrap();
        assert!(cut.diagnostics.truncated.is_some(), "protocol {p}");
        assert!(!cut.entries.is_empty());
        assert!(cut.entries.len() <= whole.entries.len());
    }
}
