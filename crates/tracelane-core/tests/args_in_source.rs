//! `ImportOptions::args_in_source`: the browser keeps the user's file, so a
//! plain-JSON import copies no args text into the model and reads an
//! event's args back from its source range when they are shown. What is
//! read back must be exactly what the model would have kept, and nothing
//! else in the model may change.

mod common;

use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::import::{event_args, import_bytes_sequential};
use tracelane_core::{ImportOptions, Trace};

fn in_source() -> ImportOptions {
    ImportOptions {
        args_in_source: true,
        ..ImportOptions::default()
    }
}

fn source_text(bytes: &[u8], (off, len): (u64, u32)) -> &[u8] {
    &bytes[off as usize..off as usize + len as usize]
}

/// Asserts that `lean` (imported with args left in the source) is `kept`
/// without its args text, and that every kept args text reads back; returns
/// how many slices' args were read back.
fn check(name: &str, bytes: &[u8], kept: &Trace, lean: &Trace) -> usize {
    assert!(lean.args_in_source, "{name}");
    // Only `[memory]` records keep their args (the op table's memory
    // columns read them): nothing else is copied.
    let memory_args: usize = (0..lean.instants.ts_ns.len())
        .filter(|&i| lean.str(lean.instants.name[i]) == "[memory]")
        .map(|i| lean.instants.args_range[i].1 as usize)
        .sum();
    assert_eq!(lean.args_arena.len(), memory_args, "{name}");
    let (a, b) = (&kept.slices, &lean.slices);
    assert_eq!(a.start_ns, b.start_ns, "{name}");
    assert_eq!(a.dur_ns, b.dur_ns, "{name}");
    assert_eq!(a.source, b.source, "{name}");
    assert_eq!(kept.links.op, lean.links.op, "{name}");
    assert_eq!(kept.links.launch, lean.links.launch, "{name}");
    let opts = OpTableOptions {
        by_shape: true,
        range_ns: None,
    };
    assert_eq!(
        op_table(kept, opts).rows,
        op_table(lean, opts).rows,
        "{name}"
    );
    let mut read_back = 0;
    for i in 0..a.len() {
        let want = kept.slice_args_json(i);
        if want == "{}" {
            continue;
        }
        let got = event_args(source_text(bytes, b.source[i])).map(String::from_utf8_lossy);
        assert_eq!(got.as_deref(), Some(&*want), "{name}: slice {i}");
        read_back += 1;
    }
    for i in 0..kept.instants.ts_ns.len() {
        let want = kept.instant_args_json(i);
        if want == "{}" {
            continue;
        }
        let source = lean.instants.source[i];
        let got = event_args(source_text(bytes, source)).map(String::from_utf8_lossy);
        assert_eq!(got.as_deref(), Some(&*want), "{name}: instant {i}");
    }
    read_back
}

#[test]
fn args_left_in_the_source_read_back_as_the_text_the_model_keeps() {
    let mut synth = Vec::new();
    tracelane_core::synth::write_kineto_trace(&mut synth, 3_000_000, 5).unwrap();
    let mut cases = vec![("synth".to_string(), synth)];
    for rel in [
        "public/hta_simple_add_a100.json.gz",
        "public/hta_triton_example.json.gz",
        "public/hta_amd_mi250_rocm.json.gz",
        "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
        "torch-cpu/mlp_train_cpu.pt.trace.json.gz",
    ] {
        cases.push((rel.to_string(), common::gunzip(rel)));
    }
    for (name, bytes) in &cases {
        let kept = import_bytes_sequential(bytes, ImportOptions::default()).unwrap();
        let lean = import_bytes_sequential(bytes, in_source()).unwrap();
        assert!(
            check(name, bytes, &kept, &lean) > 0,
            "{name}: no args to read back"
        );
    }
}

#[test]
fn edge_fixtures_read_their_args_back_too() {
    let dir = common::fixtures().join("edge");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let (Ok(kept), Ok(lean)) = (
            import_bytes_sequential(&bytes, ImportOptions::default()),
            import_bytes_sequential(&bytes, in_source()),
        ) else {
            continue;
        };
        if lean.args_in_source {
            check(&name, &bytes, &kept, &lean);
        }
    }
}

#[test]
fn compressed_and_translated_inputs_keep_their_args_text() {
    for rel in [
        "public/hta_triton_example.json.gz",
        "neuron-provisional/system_profile.json",
        "edge/neuron_variants.json",
        "perfetto/neuron_like_system.pftrace",
    ] {
        let bytes = std::fs::read(common::fixtures().join(rel)).unwrap();
        let t = import_bytes_sequential(&bytes, in_source()).unwrap();
        assert!(
            !t.args_in_source,
            "{rel}: its source is not the file's bytes"
        );
    }
}

#[test]
fn event_args_is_none_for_what_is_not_an_event_with_args() {
    assert_eq!(event_args(b""), None);
    assert_eq!(event_args(b"[1, 2]"), None);
    assert_eq!(event_args(br#"{"ph": "X", "name": "a"}"#), None);
    assert_eq!(
        event_args(br#"{"ph": "X", "args": {"a": [1, {"b": "}"}]"#),
        None
    );
    assert_eq!(
        event_args(br#" {"args": {"a": [1, {"b": "}"}]}, "ph": "X"}"#),
        Some(&br#"{"a": [1, {"b": "}"}]}"#[..])
    );
}
