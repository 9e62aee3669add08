//! The browser's two-worker import (`import_in_two`, carried encoded): the
//! file's later part is parsed by a second importer (`Importer::for_part`),
//! carried over as bytes (`finish_part`) and merged (`absorb_part`). Whatever the cut, the model
//! must be the one the sequential import builds — or the part is refused
//! and the first importer reads those bytes itself.

mod common;

use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::import::{event_boundary, import_bytes_sequential, import_in_two, PartCarry};
use tracelane_core::{ImportError, ImportOptions, Importer, Trace};

/// Everything a view reads from a model, as text.
fn fingerprint(t: &Trace) -> String {
    let s = &t.slices;
    let names: Vec<&str> = (0..s.len()).map(|i| t.slice_name(i)).collect();
    let cats: Vec<&str> = s.cat.iter().map(|&c| t.str(c)).collect();
    let dims: Vec<&str> = s.input_dims.iter().map(|c| t.str(c)).collect();
    let args: Vec<std::borrow::Cow<str>> = (0..s.len()).map(|i| t.slice_args_json(i)).collect();
    let iargs: Vec<std::borrow::Cow<str>> = (0..t.instants.ts_ns.len())
        .map(|i| t.instant_args_json(i))
        .collect();
    let tracks: Vec<String> = t
        .tracks
        .iter()
        .map(|tr| {
            let p = &t.processes[tr.process.0 as usize];
            format!(
                "{}/{} {:?} {:?}/{:?} {:?} {:?} {:?}",
                t.lane_label(p.pid),
                t.lane_label(tr.tid),
                tr.kind,
                p.name.map(|n| t.str(n)),
                tr.name.map(|n| t.str(n)),
                tr.sort_index,
                tr.slices,
                tr.max_depth
            )
        })
        .collect();
    let series: Vec<&str> = t.counters.series.iter().map(|&c| t.str(c)).collect();
    let table = op_table(
        t,
        OpTableOptions {
            by_shape: true,
            range_ns: None,
        },
    );
    format!(
        "{names:?}\n{cats:?}\n{dims:?}\n{args:?}\n{iargs:?}\n{tracks:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{series:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
        s.start_ns,
        s.dur_ns,
        s.depth,
        s.parent,
        s.external_id,
        s.correlation,
        s.stream,
        s.source,
        s.file_order,
        t.links.launch,
        t.links.op,
        t.links.state,
        t.counters.value,
        t.instants.ts_ns,
        (&t.flows.id, &t.flows.from, &t.flows.to),
        t.header,
        t.clock_offset_ns,
        t.diagnostics,
        table.rows,
    )
}

/// Imports `bytes` as the browser does with a cut at `cut`: chunks up to
/// the cut into the first importer, the rest into a part. Returns the model
/// and whether the part was merged.
fn split_import(bytes: &[u8], cut: usize) -> Result<(Trace, bool), ImportError> {
    split_import_with(bytes, cut, ImportOptions::default())
}

fn split_import_with(
    bytes: &[u8],
    cut: usize,
    opts: ImportOptions,
) -> Result<(Trace, bool), ImportError> {
    let two = import_in_two(bytes, cut, opts, PartCarry::Encoded, 777_777)?;
    Ok((two.trace, two.merged))
}

/// The browser splits only files of many megabytes, whose format is decided
/// from their first 64 KiB; leading whitespace (valid JSON) makes a small
/// input decided before any cut.
fn padded(json: &[u8]) -> Vec<u8> {
    let mut out = vec![b' '; 64 << 10];
    out.extend_from_slice(json);
    out
}

fn gunzip(rel: &str) -> Vec<u8> {
    padded(&common::gunzip(rel))
}

/// Cuts where the browser would look: event boundaries after several offsets.
fn cuts(bytes: &[u8], tries: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (1..=tries)
        .filter_map(|k| {
            let from = bytes.len() * k / (tries + 1);
            event_boundary(&bytes[from..]).map(|i| from + i)
        })
        .collect();
    out.dedup();
    out
}

#[test]
fn a_merged_part_gives_the_sequential_model_on_real_traces() {
    let mut synth = Vec::new();
    tracelane_core::synth::write_kineto_trace(&mut synth, 12_000_000, 3).unwrap();
    let cases = [
        (
            "hta_large".to_string(),
            gunzip("public/hta_large_216k_events.json.gz"),
        ),
        (
            "kineto legacy resnet50".to_string(),
            gunzip("public/kineto_legacy_2021_resnet50.pt.trace.json.gz"),
        ),
        (
            "rmsnorm compiled".to_string(),
            gunzip("torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz"),
        ),
        ("synth 12 MB".to_string(), padded(&synth)),
    ];
    for (name, bytes) in &cases {
        let want = fingerprint(&import_bytes_sequential(bytes, ImportOptions::default()).unwrap());
        let cuts = cuts(bytes, 3);
        assert!(!cuts.is_empty(), "{name}: no event boundary");
        for cut in cuts {
            let (got, merged) = split_import(bytes, cut).unwrap();
            assert!(merged, "{name}: the part at {cut} was not merged");
            assert_eq!(fingerprint(&got), want, "{name} cut at {cut}");
            // The native import's way: the part parsed on a second thread
            // and merged in memory, not through its encoding.
            let two = import_in_two(
                bytes,
                cut,
                ImportOptions::default(),
                PartCarry::Thread,
                1 << 20,
            )
            .unwrap();
            assert!(two.merged, "{name}: threads did not merge at {cut}");
            assert_eq!(
                fingerprint(&two.trace),
                want,
                "{name} cut at {cut} (threads)"
            );
        }
    }
}

#[test]
fn with_args_left_in_the_source_a_merged_part_gives_the_sequential_model() {
    let opts = ImportOptions {
        args_in_source: true,
        ..ImportOptions::default()
    };
    let mut synth = Vec::new();
    tracelane_core::synth::write_kineto_trace(&mut synth, 6_000_000, 7).unwrap();
    for (name, bytes) in [
        ("hta_large", gunzip("public/hta_large_216k_events.json.gz")),
        ("synth 6 MB", padded(&synth)),
    ] {
        let sequential = import_bytes_sequential(&bytes, opts).unwrap();
        // Only `[memory]` records keep their args text (the op table's
        // memory columns read it).
        let memory_args: usize = (0..sequential.instants.ts_ns.len())
            .filter(|&i| sequential.str(sequential.instants.name[i]) == "[memory]")
            .map(|i| sequential.instants.args_range[i].1 as usize)
            .sum();
        assert!(sequential.args_in_source && sequential.args_arena.len() == memory_args);
        let want = fingerprint(&sequential);
        for cut in cuts(&bytes, 2) {
            let (got, merged) = split_import_with(&bytes, cut, opts).unwrap();
            assert!(merged, "{name}: the part at {cut} was not merged");
            assert_eq!(fingerprint(&got), want, "{name} cut at {cut}");
        }
        // A part that kept its args text does not merge into one that did not.
        let cut = cuts(&bytes, 1)[0];
        let mut first = Importer::new(opts);
        first.push(&bytes[..cut]).unwrap();
        let mut part = Importer::for_part(ImportOptions::default(), false, cut as u64);
        part.push(&bytes[cut..]).unwrap();
        assert!(!first.absorb_part(&part.finish_part().unwrap()).unwrap());
    }
}

#[test]
fn every_cut_of_the_edge_fixtures_gives_the_sequential_result() {
    let dir = common::fixtures().join("edge");
    let mut merged_any = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = padded(&std::fs::read(&path).unwrap());
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let want =
            import_bytes_sequential(&bytes, ImportOptions::default()).map(|t| fingerprint(&t));
        let mut from = 0;
        while let Some(k) = event_boundary(&bytes[from..]) {
            let cut = from + k;
            let got = split_import(&bytes, cut);
            merged_any += got.as_ref().is_ok_and(|(_, m)| *m) as usize;
            assert_eq!(
                got.map(|(t, _)| fingerprint(&t)),
                want,
                "{name} cut at byte {cut}"
            );
            from = cut + 1;
        }
    }
    assert!(merged_any > 10, "only {merged_any} cuts merged");
}

#[test]
fn a_cut_inside_a_pretty_printed_event_is_refused_and_read_sequentially() {
    // Nested objects on their own lines: `,\n{` also occurs inside an event.
    let json = &padded(b"{\"traceEvents\": [\n{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 9, \"args\": {\"list\": [\n{\"k\": 1},\n{\"k\": 2}\n]}},\n{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 3}\n]}");
    let want = fingerprint(&import_bytes_sequential(json, ImportOptions::default()).unwrap());
    let inside = event_boundary(json).unwrap();
    assert_eq!(&json[inside..inside + 4], b"{\"k\"");
    let (got, merged) = split_import(json, inside).unwrap();
    assert!(!merged);
    assert_eq!(fingerprint(&got), want);
}

#[test]
fn a_part_with_string_flow_ids_is_remapped_into_the_first_parts_strings() {
    let json = &padded(
        br#"{"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "early", "pid": 1, "tid": 1, "ts": 1, "dur": 50},
{"ph": "s", "id": "flow-a", "cat": "fwd", "name": "f", "pid": 1, "tid": 1, "ts": 2},
{"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 2, "ts": 60, "dur": 5},
{"ph": "f", "id": "flow-a", "bp": "e", "cat": "fwd", "name": "f", "pid": 1, "tid": 2, "ts": 61}
]}"#,
    );
    let want = fingerprint(&import_bytes_sequential(json, ImportOptions::default()).unwrap());
    let needle = b",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"late\"";
    let cut = json
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
        + 2;
    let (got, merged) = split_import(json, cut).unwrap();
    assert!(merged);
    assert_eq!(got.flows.id.len(), 1, "the flow across the cut is bound");
    assert_eq!(fingerprint(&got), want);
}

#[test]
fn a_damaged_part_is_refused_without_a_panic() {
    let bytes = gunzip("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let cut = cuts(&bytes, 1)[0];
    let opts = ImportOptions::default();
    let mut part = Importer::for_part(opts, false, cut as u64);
    part.push(&bytes[cut..]).unwrap();
    let encoded = part.finish_part().unwrap();
    let first = || {
        let mut imp = Importer::new(opts);
        imp.push(&bytes[..cut]).unwrap();
        imp
    };
    for len in (0..encoded.len()).step_by(encoded.len() / 211 + 1) {
        assert!(
            !first().absorb_part(&encoded[..len]).unwrap(),
            "cut at {len}"
        );
    }
    for at in (8..encoded.len()).step_by(encoded.len() / 97 + 1) {
        let mut bad = encoded.clone();
        bad[at] ^= 0xA5;
        // Either refused, or (a flipped value byte) merged into some model:
        // never a panic.
        let mut imp = first();
        if imp.absorb_part(&bad).unwrap() {
            let _ = imp.finish();
        }
    }
    // A part that does not start where the first importer stopped.
    let mut early = Importer::new(opts);
    early.push(&bytes[..cut - 1]).unwrap();
    assert!(!early.absorb_part(&encoded).unwrap());
    assert!(first().absorb_part(&encoded).unwrap());
}
