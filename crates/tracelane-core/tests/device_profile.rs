//! The Neuron device profile, read twice — the Parquet profile directory and
//! its Perfetto export — against the facts its generator computed from the
//! rows (`neuron-provisional/device_profile.expected.json`).

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use tracelane_core::analysis::engines::{engines, EngineReport};
use tracelane_core::analysis::Scope;
use tracelane_core::import::neuron_device::import_profile;
use tracelane_core::Trace;

fn profile_files() -> Vec<(String, Vec<u8>)> {
    common::profile_files("neuron-provisional/device_profile")
}

fn parquet_trace() -> Trace {
    import_profile(profile_files()).unwrap()
}

fn expected() -> Value {
    common::expected("neuron-provisional/device_profile.expected.json")
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-6 * b.abs().max(1.0),
        "{what}: {a} != {b}"
    );
}

fn lane_slices(t: &Trace) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for (k, tr) in t.tracks.iter().enumerate() {
        let n = tr.slices.len() as u64;
        if n > 0 {
            m.insert(t.track_label(k), n);
        }
    }
    m
}

#[test]
fn parquet_tables_are_all_read_and_listed() {
    let t = parquet_trace();
    let p = t.device_profile.as_ref().unwrap();
    let exp = expected();
    for (name, facts) in exp["parquet"]["tables"].as_object().unwrap() {
        let table = p
            .tables
            .iter()
            .find(|x| &x.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(table.rows as i64, i(&facts["rows"]), "{name} rows");
        assert_eq!(
            table.columns.len() as i64,
            i(&facts["columns"]),
            "{name} columns"
        );
        assert!(table.known, "{name}");
    }
    assert_eq!(p.schema_version.as_deref(), Some("7.4.0"));
    assert!(p.schema_known());
    // Columns the reader does not use are listed, not dropped: they are in
    // every instruction's args.
    let ins = p.tables.iter().find(|x| x.name == "Instruction").unwrap();
    assert!(ins.unused_columns.contains(&"operands".to_string()));
    let s = p.instructions.slice[0] as usize;
    let args: Value = serde_json::from_str(&t.slice_args_json(s)).unwrap();
    assert!(
        args.get("operands").is_some() && args.get("bir_id").is_some(),
        "{args}"
    );
    assert_eq!(p.execution_ns, Some((0, 38340)));
    // Nothing skipped or repaired; the one note: no host op launched these
    // (a device profile has no host side), counted.
    let w = &t.diagnostics.warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w["device_without_op"].count, 256 + 672);
}

#[test]
fn parquet_lanes_equal_the_perfetto_exports_lanes() {
    let exp = expected();
    let want: BTreeMap<String, u64> = exp["pftrace"]["track_slices"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(lane_slices(&parquet_trace()), want);
    let pf = common::load("neuron-provisional/device_profile_model_1.pftrace");
    assert_eq!(lane_slices(&pf), want);
    // Both make them device lanes of a NeuronCore.
    for t in [parquet_trace(), pf] {
        assert!(t
            .tracks
            .iter()
            .filter(|tr| !tr.slices.is_empty())
            .all(|tr| tr.kind == tracelane_core::model::TrackKind::DeviceStream));
    }
}

#[test]
fn semaphores_and_counters_are_kept() {
    let t = parquet_trace();
    let exp = expected();
    let mut by_lane: BTreeMap<String, u64> = BTreeMap::new();
    for k in 0..t.instants.ts_ns.len() {
        *by_lane
            .entry(t.track_label(t.instants.track[k].idx()))
            .or_default() += 1;
    }
    for (name, n) in exp["pftrace"]["instant_tracks"].as_object().unwrap() {
        assert_eq!(by_lane.get(name).copied(), n.as_u64(), "{name}");
    }
    let mut series: BTreeMap<&str, u64> = BTreeMap::new();
    for &s in &t.counters.series {
        *series.entry(t.str(s)).or_default() += 1;
    }
    for (name, n) in exp["pftrace"]["counter_tracks"].as_object().unwrap() {
        assert_eq!(series.get(name.as_str()).copied(), n.as_u64(), "{name}");
    }
}

fn check_engines(r: &EngineReport, exp: &Value, full: bool) {
    for (engine, e) in exp["parquet"]["instruction"]["by_engine"]
        .as_object()
        .unwrap()
    {
        let row = r
            .engines
            .iter()
            .find(|x| &x.engine == engine)
            .unwrap_or_else(|| panic!("{engine}"));
        assert_eq!(row.instructions as i64, i(&e["count"]), "{engine}");
        assert_eq!(row.instruction_ns, i(&e["sum_duration_ns"]), "{engine}");
        assert_eq!(row.busy_ns, i(&e["busy_ns"]), "{engine}");
        assert_eq!(row.active_ns, i(&e["active_ns"]), "{engine}");
        assert_eq!(row.semaphore_ns, i(&e["event_semaphore_ns"]), "{engine}");
        if full {
            assert_eq!(row.active_from, "ActiveTime");
            close(
                row.busy_pct,
                e["active_pct_of_execution"].as_f64().unwrap(),
                engine,
            );
            assert_eq!(row.evt_wait_ns, Some(i(&e["evt_wait_time_ns"])), "{engine}");
            assert_eq!(
                row.dma_wait_ns.unwrap_or(0),
                i(&e["dma_wait_time_ns"]),
                "{engine}"
            );
        }
    }
    for (track, e) in exp["parquet"]["instruction"]["by_timeline_track"]
        .as_object()
        .unwrap()
    {
        let rows = r
            .engines
            .iter()
            .flat_map(|x| x.tracks.iter())
            .find(|(n, _)| n == track)
            .unwrap_or_else(|| panic!("{track}"))
            .1;
        assert_eq!(rows as i64, i(&e["perfetto_rows"]), "{track}");
    }
    for (key, e) in exp["parquet"]["instruction"]["by_engine_opcode"]
        .as_object()
        .unwrap()
    {
        let (engine, opcode) = key.split_once('/').unwrap();
        let row = r.engines.iter().find(|x| x.engine == engine).unwrap();
        let op = row
            .opcodes
            .iter()
            .find(|o| o.opcode == opcode)
            .unwrap_or_else(|| panic!("{key}"));
        assert_eq!(op.count as i64, i(&e["count"]), "{key}");
        assert_eq!(op.instruction_ns, i(&e["sum_duration_ns"]), "{key}");
    }
}

#[test]
fn engine_view_from_parquet_equals_the_generators_figures() {
    let t = parquet_trace();
    let r = engines(&t, &Scope::Whole).unwrap();
    let exp = expected();
    assert_eq!(r.source, "parquet");
    assert_eq!(r.window_ns, (0, 38340));
    check_engines(&r, &exp, true);
    for (hlo, e) in exp["parquet"]["by_hlo_name"].as_object().unwrap() {
        let row = r
            .by_hlo
            .iter()
            .find(|x| &x.name == hlo)
            .unwrap_or_else(|| panic!("{hlo}"));
        assert_eq!(row.instructions as i64, i(&e["instructions"]), "{hlo}");
        assert_eq!(row.instruction_ns, i(&e["sum_duration_ns"]), "{hlo}");
        assert_eq!(row.busy_ns, i(&e["busy_ns"]), "{hlo}");
        assert_eq!(row.raw_flops, i(&e["raw_flops"]), "{hlo}");
        assert_eq!(row.adjusted_flops, i(&e["adjusted_flops"]), "{hlo}");
        assert_eq!(row.transpose_flops, i(&e["flops_transpose"]), "{hlo}");
        assert_eq!(row.hbm_read_bytes, i(&e["hbm_read_bytes"]), "{hlo}");
        assert_eq!(row.hbm_write_bytes, i(&e["hbm_write_bytes"]), "{hlo}");
    }
    let dma = &exp["parquet"]["dma_packet"];
    let all = r.dma_all.as_ref().unwrap();
    assert_eq!(all.packets as i64, i(&dma["packets"]));
    assert_eq!(all.bytes, Some(i(&dma["transfer_bytes"])));
    assert_eq!(all.busy_ns, i(&dma["busy_ns"]));
    close(
        all.throughput_bytes_per_s.unwrap(),
        dma["throughput_bytes_per_s"].as_f64().unwrap(),
        "all DMA",
    );
    close(
        all.pct_of_bandwidth.unwrap(),
        dma["throughput_bytes_per_s"].as_f64().unwrap() * 100.0 / 4.375e11,
        "all DMA % of bandwidth",
    );
    for (q, e) in dma["by_queue"].as_object().unwrap() {
        let row = r
            .dma_queues
            .iter()
            .find(|x| &x.name == q)
            .unwrap_or_else(|| panic!("{q}"));
        assert_eq!(row.packets as i64, i(&e["packets"]), "{q}");
        assert_eq!(row.bytes, Some(i(&e["transfer_bytes"])), "{q}");
        assert_eq!(row.busy_ns, i(&e["busy_ns"]), "{q}");
        close(
            row.throughput_bytes_per_s.unwrap(),
            e["throughput_bytes_per_s"].as_f64().unwrap(),
            q,
        );
    }
    for (idx, e) in dma["by_engine_idx"].as_object().unwrap() {
        let name = format!("DMA engine {idx}");
        let row = r
            .dma_engines
            .iter()
            .find(|x| x.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(row.packets as i64, i(&e["packets"]), "{name}");
        assert_eq!(row.busy_ns, i(&e["busy_ns"]), "{name}");
        assert_eq!(row.bytes, Some(i(&e["transfer_bytes"])), "{name}");
    }
}

/// HFU, MFU and MBU computed from the instructions equal the figures the
/// generator computed with the schema's formulas, and the profile's own
/// `Summary` is shown beside them.
#[test]
fn utilisation_from_the_instructions_equals_the_summary_definitions() {
    let r = engines(&parquet_trace(), &Scope::Whole).unwrap();
    let u = r.utilization.as_ref().unwrap();
    let roof = &expected()["parquet"]["roofline"];
    close(
        u.hfu_pct,
        roof["summary_hfu_estimated_percent"].as_f64().unwrap(),
        "hfu",
    );
    close(
        u.mfu_pct,
        roof["summary_mfu_estimated_percent"].as_f64().unwrap(),
        "mfu",
    );
    close(
        u.mbu_pct,
        roof["summary_mbu_estimated_percent"].as_f64().unwrap(),
        "mbu",
    );
    assert_eq!(u.hardware_flops, i(&roof["hardware_flops"]));
    assert_eq!(u.transpose_flops, i(&roof["transpose_flops"]));
    assert_eq!(
        u.hbm_bytes,
        i(&roof["hbm_read_bytes"]) + i(&roof["hbm_write_bytes"])
    );
    let summary: Vec<&str> = u.summary.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        summary,
        [
            "hfu_estimated_percent",
            "mfu_estimated_percent",
            "mbu_estimated_percent"
        ]
    );
    // The Perfetto export has no counters to compute them from.
    let pf = common::load("neuron-provisional/device_profile_model_1.pftrace");
    assert!(engines(&pf, &Scope::Whole).unwrap().utilization.is_none());
}

#[test]
fn engine_view_from_the_perfetto_export_equals_the_parquets() {
    let t = common::load("neuron-provisional/device_profile_model_1.pftrace");
    let r = engines(&t, &Scope::Whole).unwrap();
    assert_eq!(r.source, "perfetto");
    check_engines(&r, &expected(), false);
    // The export's instruction args name the HLO op: same groups, same times.
    let p = engines(&parquet_trace(), &Scope::Whole).unwrap();
    let names = |r: &EngineReport| {
        r.by_hlo
            .iter()
            .map(|g| (g.name.clone(), g.instructions, g.busy_ns))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&r), names(&p));
    let all = r.dma_all.as_ref().unwrap();
    assert_eq!(all.packets, p.dma_all.as_ref().unwrap().packets);
    assert_eq!(all.busy_ns, p.dma_all.as_ref().unwrap().busy_ns);
}

#[test]
fn a_directory_without_an_instruction_table_says_what_it_found() {
    let files: Vec<_> = profile_files()
        .into_iter()
        .filter(|(n, _)| n != "Instruction.parquet")
        .collect();
    let err = import_profile(files).unwrap_err().to_string();
    assert!(
        err.contains("Instruction") && err.contains("DmaPacket"),
        "{err}"
    );
}

#[test]
fn a_cut_off_table_is_skipped_and_counted() {
    let mut files = profile_files();
    for (n, b) in files.iter_mut() {
        if n == "DmaPacket.parquet" {
            b.truncate(b.len() / 2);
        }
    }
    files.push(("notes.txt".into(), b"hello".to_vec()));
    let t = import_profile(files).unwrap();
    let w = &t.diagnostics.warnings["device_profile_file_skipped"];
    assert_eq!(w.count, 2);
    assert!(t.device_profile.as_ref().unwrap().dma.is_empty());
}

#[test]
fn wall_clock_times_read_as_epoch_nanoseconds() {
    use tracelane_core::import::neuron_device::wall_clock_ns;
    assert_eq!(
        wall_clock_ns("2025-08-13 20:05:07.555400+00:00"),
        Some(1_755_115_507_555_400_000)
    );
    assert_eq!(wall_clock_ns("1970-01-01T00:00:01Z"), Some(1_000_000_000));
    assert_eq!(wall_clock_ns("1970-01-01 01:00:00+01:00"), Some(0));
    assert_eq!(wall_clock_ns("not a time"), None);
}

#[test]
fn hlo_roofline_uses_the_profiles_own_roofs() {
    use tracelane_core::analysis::roofline::{roofline, Bound, PeakOverride};
    let t = parquet_trace();
    let args = |s: usize| t.slice_args_json(s).to_string();
    let r = roofline(&t, &Scope::Whole, PeakOverride::default(), &args).unwrap();
    let exp = &expected()["parquet"];
    let roof = &exp["roofline"];
    assert_eq!(r.level, "hlo");
    let peak = &r.peaks[0];
    close(
        peak.flops_per_s,
        roof["tensor_peak_flops_per_s"].as_f64().unwrap(),
        "peak",
    );
    close(
        peak.bytes_per_s,
        roof["hbm_ddr_bandwidth_bytes_per_s"].as_f64().unwrap(),
        "hbm",
    );
    for (hlo, e) in exp["by_hlo_name"].as_object().unwrap() {
        let point = r.points.iter().find(|p| &p.name == hlo);
        match e["bound"].as_str() {
            None => assert!(point.is_none(), "{hlo}"),
            Some(bound) => {
                let p = point.unwrap_or_else(|| panic!("{hlo}"));
                close(
                    p.intensity.unwrap(),
                    e["arithmetic_intensity_flops_per_byte"].as_f64().unwrap(),
                    hlo,
                );
                close(
                    p.achieved_flops_per_s.unwrap(),
                    e["achieved_flops_per_s"].as_f64().unwrap(),
                    hlo,
                );
                let want = if bound == "compute" {
                    Bound::Compute
                } else {
                    Bound::Memory
                };
                assert_eq!(p.bound, Some(want), "{hlo}");
                let attainable = peak
                    .flops_per_s
                    .min(p.intensity.unwrap() * peak.bytes_per_s);
                close(
                    p.headroom.unwrap(),
                    attainable / p.achieved_flops_per_s.unwrap(),
                    hlo,
                );
            }
        }
    }
    // HLO ops with time but no Tensor-engine FLOPs are listed, not placed.
    assert!(r.unplaced.iter().any(|u| u.name == "multiply.1"));
    // The Perfetto export has no FLOP counters: nothing placed, all listed.
    let pf = common::load("neuron-provisional/device_profile_model_1.pftrace");
    let args = |s: usize| pf.slice_args_json(s).to_string();
    let r = roofline(&pf, &Scope::Whole, PeakOverride::default(), &args).unwrap();
    assert!(r.points.is_empty() && r.no_roofs.is_some());
    assert!(r.unplaced.iter().any(|u| u.name == "dot.12"));
}

fn tar_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use tracelane_core::import::archive::{tar_header, tar_padding, TAR_END};
    let mut out = Vec::new();
    for (name, data) in files {
        out.extend_from_slice(&tar_header(
            &format!("device_profile/{name}"),
            data.len() as u64,
        ));
        out.extend_from_slice(data);
        out.extend(std::iter::repeat_n(0u8, tar_padding(data.len() as u64)));
    }
    out.extend_from_slice(&TAR_END);
    out
}

fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    w.add_directory("device_profile/", opts).unwrap();
    for (name, data) in files {
        w.start_file(format!("device_profile/{name}"), opts)
            .unwrap();
        w.write_all(data).unwrap();
    }
    w.start_file("__MACOSX/device_profile/._Instruction.parquet", opts)
        .unwrap();
    w.write_all(b"resource fork").unwrap();
    w.finish().unwrap().into_inner()
}

/// The same model from the directory, a .zip, a .tar and a .tar.gz of it
/// (what the page sends for a dropped folder is such a tar).
#[test]
fn a_zip_or_tar_of_the_directory_opens_as_the_same_profile() {
    use tracelane_core::{import_bytes, ImportOptions};
    let files = profile_files();
    let want = lane_slices(&parquet_trace());
    let tar = tar_of(&files);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    for (what, bytes) in [
        ("zip", zip_of(&files)),
        ("tar", tar.clone()),
        ("tar.gz", gz.finish().unwrap()),
    ] {
        let t = import_bytes(&bytes, ImportOptions::default())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(lane_slices(&t), want, "{what}");
        assert_eq!(
            t.device_profile.as_ref().unwrap().tables.len(),
            11,
            "{what}"
        );
        let r = engines(&t, &Scope::Whole).unwrap();
        assert_eq!(r.engines.len(), 5, "{what}");
    }
}

#[test]
fn a_lone_instruction_table_opens_from_its_bytes() {
    use tracelane_core::{import_bytes, ImportOptions};
    let (_, bytes) = profile_files()
        .into_iter()
        .find(|(n, _)| n == "Instruction.parquet")
        .unwrap();
    let t = import_bytes(&bytes, ImportOptions::default()).unwrap();
    let r = engines(&t, &Scope::Whole).unwrap();
    // No ActiveTime table: active time from the instructions, the same.
    let tensor = r.engines.iter().find(|e| e.engine == "Tensor").unwrap();
    assert_eq!(
        (tensor.active_ns, tensor.active_from.as_str()),
        (19285, "instructions")
    );
    assert_eq!(r.window_from, "instructions' span");
}

#[test]
fn archives_that_are_not_one_trace_say_what_they_hold() {
    use tracelane_core::{import_bytes, ImportOptions};
    let two = tar_of(&[
        ("a.json".into(), b"{}".to_vec()),
        ("b.json".into(), b"{}".to_vec()),
    ]);
    let err = import_bytes(&two, ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 files") && err.contains("a.json"), "{err}");
    let empty = tar_of(&[]);
    let err = import_bytes(&empty, ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a trace"), "{err}");
    // One trace in a zip is that trace.
    let json = br#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}"#;
    let one = zip_of(&[("t.json".into(), json.to_vec())]);
    let t = import_bytes(&one, ImportOptions::default()).unwrap();
    assert_eq!(t.slices.len(), 1);
    // A zip bomb stops at the limit.
    let big = zip_of(&[("Instruction.parquet".into(), vec![0u8; 4 << 20])]);
    let opts = ImportOptions {
        max_json_bytes: 1 << 20,
        ..ImportOptions::default()
    };
    let err = import_bytes(&big, opts).unwrap_err().to_string();
    assert!(err.contains("limit"), "{err}");
}

/// The browser's route: the import worker's importer hands the archive back
/// unopened, the decoder worker unpacks it and decodes the tables, which
/// travel encoded; the model built from them is the one-step import's.
#[test]
fn a_profile_decoded_elsewhere_and_carried_encoded_is_the_same_model() {
    use tracelane_core::import::neuron_device::{decode_profile, import_decoded};
    use tracelane_core::import::{table, unpack, Finished, Unpacked};
    use tracelane_core::{ImportOptions, Importer};
    let mut imp = Importer::new(ImportOptions::default());
    imp.push(&tar_of(&profile_files())).unwrap();
    let Finished::Archive(bytes) = imp.finish_or_archive().unwrap() else {
        panic!("a tar of tables is handed back as an archive")
    };
    let Unpacked::Profile(unpacked) = unpack(&bytes, u64::MAX).unwrap() else {
        panic!("the tar holds a profile")
    };
    let direct = import_profile(unpacked.clone()).unwrap();
    let carried = table::decode(&table::encode(&decode_profile(unpacked))).unwrap();
    let t = import_decoded(carried).unwrap();
    assert_eq!(lane_slices(&t), lane_slices(&direct));
    assert_eq!(t.device_profile, direct.device_profile);
    assert_eq!(
        serde_json::to_value(engines(&t, &Scope::Whole).unwrap()).unwrap(),
        serde_json::to_value(engines(&direct, &Scope::Whole).unwrap()).unwrap()
    );
    assert_eq!(t.diagnostics.bytes_read, direct.diagnostics.bytes_read);
}

/// The page keeps a plain-JSON file's args in the file and reads them back
/// by byte range; a trace inside an archive has no such ranges in the file
/// the page holds, so its args stay in the model.
#[test]
fn a_zipped_trace_keeps_its_args_in_the_model() {
    use tracelane_core::{import_bytes, ImportOptions};
    let json = br#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2,"args":{"Record function id":7}}]}"#;
    let opts = ImportOptions {
        args_in_source: true,
        ..ImportOptions::default()
    };
    assert!(import_bytes(json, opts).unwrap().args_in_source);
    let t = import_bytes(&zip_of(&[("t.json".into(), json.to_vec())]), opts).unwrap();
    assert!(!t.args_in_source);
}

fn slices_of(t: &Trace, cat: &str) -> Vec<usize> {
    (0..t.slices.len())
        .filter(|&i| t.str(t.slices.cat[i]) == cat)
        .collect()
}

/// The system profile (Parquet) beside the device profile it lists: one
/// trace, the device's lanes placed at its hardware execution (the one of
/// three at the profile's wall clock), the framework → runtime → hardware
/// chain linked, the engine figures those of the device profile alone.
#[test]
fn a_system_profile_beside_its_device_profile_opens_as_one_trace() {
    let exp = common::expected("neuron-provisional/system_device.expected.json");
    let t = import_profile(common::tree_files("neuron-provisional/system_device")).unwrap();
    assert!(t
        .diagnostics
        .format
        .starts_with("Neuron system + device profile"));
    let placement = t
        .device_profile
        .as_ref()
        .unwrap()
        .placement
        .clone()
        .unwrap();
    assert!(
        placement.contains("exec 2") && placement.contains("chosen by the profile's wall clock"),
        "{placement}"
    );
    let ins = slices_of(&t, "neuron_instruction");
    assert_eq!(ins.len() as i64, i(&exp["instructions"]));
    let first = ins.iter().map(|&k| t.slices.start_ns[k]).min().unwrap();
    let last = ins
        .iter()
        .map(|&k| t.slices.start_ns[k] + t.slices.dur_ns[k])
        .max()
        .unwrap();
    assert_eq!(first, i(&exp["first_instruction_ns"]));
    assert_eq!(last, i(&exp["last_instruction_end_ns"]));
    // Inside the hardware execution it was placed at.
    let hw = slices_of(&t, "neuron_hw");
    assert_eq!(hw.len(), 3);
    let placed = hw
        .iter()
        .find(|&&k| t.slices.start_ns[k] == i(&exp["hardware_start_ns"]))
        .unwrap();
    assert!(last <= t.slices.start_ns[*placed] + t.slices.dur_ns[*placed]);
    // The chain: each framework op's External id reaches its hardware event.
    let ops = slices_of(&t, "cpu_op");
    assert_eq!(
        ops.len() + hw.len() + slices_of(&t, "neuron_rt").len(),
        i(&exp["system_events"]) as usize
    );
    for &o in &ops {
        let x = t.slices.external_id[o];
        assert!(
            hw.iter().any(|&h| t.slices.external_id[h] == x),
            "op {o} not linked"
        );
    }
    assert!(t
        .diagnostics
        .time_unit_decision
        .contains(&format!("{} flow links", exp["flow_links"])));
    // The engines read the same, at the placed times.
    let alone = engines(&parquet_trace(), &Scope::Whole).unwrap();
    let joined = engines(&t, &Scope::Whole).unwrap();
    assert_eq!(joined.engines.len(), alone.engines.len());
    for (a, b) in joined.engines.iter().zip(&alone.engines) {
        assert_eq!(
            (&a.engine, a.busy_pct, a.instructions),
            (&b.engine, b.busy_pct, b.instructions)
        );
    }
    let off = i(&exp["offset_ns"]);
    assert_eq!(
        joined.window_ns,
        (alone.window_ns.0 + off, alone.window_ns.1 + off)
    );
    assert_eq!(joined.notes.first(), Some(&placement));
    assert_eq!(t.diagnostics.warning_count("device_profile_not_placed"), 0);
    assert_eq!(
        t.diagnostics.warning_count("device_profile_unknown_table"),
        0
    );
}

/// Without its DeviceProfileList row the device profile sits at its own
/// wall clock, and says so.
#[test]
fn a_device_profile_no_list_names_sits_at_its_wall_clock_and_is_counted() {
    let files: Vec<_> = common::tree_files("neuron-provisional/system_device")
        .into_iter()
        .filter(|(n, _)| !n.ends_with("DeviceProfileList.parquet"))
        .collect();
    let t = import_profile(files).unwrap();
    assert_eq!(t.diagnostics.warning_count("device_profile_not_placed"), 1);
    let ins = slices_of(&t, "neuron_instruction");
    let first = ins.iter().map(|&k| t.slices.start_ns[k]).min().unwrap();
    // Metadata.first_ts 2025-08-13 20:05:07.555400 UTC is the profile's
    // first_hw_timestamp (0); its first instruction starts at 480 ns.
    assert_eq!(first, 1_755_115_507_555_400_000 + 480);
    assert!(t
        .device_profile
        .unwrap()
        .placement
        .unwrap()
        .contains("no DeviceProfileList row names rmsnorm_proj"));
}

/// A system profile's tables alone: its events, lanes and chains.
#[test]
fn a_parquet_system_profile_alone_opens_as_its_events() {
    let files: Vec<_> = common::tree_files("neuron-provisional/system_device")
        .into_iter()
        .filter(|(n, _)| n.contains("/system/"))
        .collect();
    let t = import_profile(files).unwrap();
    assert!(t.device_profile.is_none());
    assert_eq!(t.slices.len(), 9);
    // The JSON system profile's lanes: framework threads, runtime and
    // hardware lanes per NeuronCore.
    let lanes: Vec<String> = (0..t.tracks.len()).map(|k| t.track_label(k)).collect();
    assert_eq!(lanes, ["TID:1113579", "NC:4", "NC4:0"]);
    assert_eq!(slices_of(&t, "neuron_hw").len(), 3);
}
