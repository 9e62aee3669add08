//! The memory report (`tracelane memory`): the peak, what is live then and
//! at any moment, never-freed blocks and churn — on a fixture whose every
//! number is worked out by hand, and on real `profile_memory=True`
//! captures against the records themselves.

mod common;

use tracelane_core::analysis::memory::{counter_series, memory, At, DeviceMemory, LiveGroup};
use tracelane_core::analysis::memory_categories::CategoryBytes;
use tracelane_core::analysis::Scope;
use tracelane_core::import::import_set;
use tracelane_core::{import_bytes, ImportOptions, Trace};

fn group(
    op: &str,
    module: Option<&str>,
    python: Option<&str>,
    bytes: i64,
    count: u64,
) -> LiveGroup {
    LiveGroup {
        op: op.into(),
        module: module.map(Into::into),
        python: python.map(Into::into),
        category: None,
        bytes,
        count,
    }
}

fn with_category(mut g: LiveGroup, category: &str) -> LiveGroup {
    g.category = Some(category.into());
    g
}

/// A trace and its raw memory timeline, opened together.
fn with_timeline(trace: &str, timeline: &str) -> Trace {
    let read = |rel: &str| {
        let p = common::fixtures().join(rel);
        (
            rel.to_string(),
            std::fs::read(&p).unwrap_or_else(|e| panic!("{rel}: {e}")),
        )
    };
    import_set(vec![read(trace), read(timeline)], ImportOptions::default()).unwrap()
}

fn device<'a>(devices: &'a [DeviceMemory], name: &str) -> &'a DeviceMemory {
    devices
        .iter()
        .find(|d| d.device == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn memory_report_finds_the_peak_and_who_holds_it() {
    let t = common::load("edge/memory_live.json");
    let r = memory(&t, &Scope::Whole, At::Time(57_000)).unwrap();
    let names: Vec<&str> = r.devices.iter().map(|d| d.device.as_str()).collect();
    assert_eq!(names, ["CPU", "CUDA:0"]);

    let cuda = device(&r.devices, "CUDA:0");
    assert_eq!(cuda.records, 6);
    assert!(cuda.totals_recorded);
    assert_eq!(cuda.peak_allocated_bytes, 1450);
    assert_eq!(cuda.peak_at_us, 150.0);
    assert_eq!(cuda.peak_reserved_bytes, 4000);
    // The annotation names an allocation outside any op; the module and the
    // Python line (not the `<built-in …>` frame) name where the op ran.
    let linear_0 = Some("nn.Module: Linear_0");
    let forward = Some("model.py(12): forward");
    assert_eq!(
        cuda.live_at_peak,
        [
            group("optimizer", None, None, 300, 1),
            group("aten::relu", linear_0, forward, 200, 1),
        ]
    );
    // 1,450 allocated, 500 of it explained by the trace's own allocations.
    assert_eq!(cuda.before_trace_at_peak_bytes, 950);
    // The free at 70 µs is of a block allocated before the capture.
    assert_eq!(cuda.frees_of_earlier_blocks, 1);
    assert_eq!((cuda.never_freed_bytes, cuda.never_freed_count), (200, 1));
    // At 57 µs: after the records at 12 and 55 µs, before the free at 58.
    assert_eq!(cuda.at_us, Some(57.0));
    assert_eq!(cuda.allocated_at_bytes, Some(1300));
    assert_eq!(
        cuda.live_at.as_deref().unwrap(),
        [
            group("aten::relu", linear_0, forward, 200, 1),
            group("aten::linear", linear_0, forward, 100, 1),
        ]
    );
    let churn: Vec<(&str, u64, i64)> = cuda
        .churn
        .iter()
        .map(|c| (c.op.as_str(), c.allocations, c.bytes))
        .collect();
    assert_eq!(
        churn,
        [
            ("optimizer", 1, 300),
            ("aten::relu", 1, 200),
            ("aten::linear", 1, 100)
        ]
    );

    // CPU records without totals: the curve is their running sum.
    let cpu = device(&r.devices, "CPU");
    assert!(!cpu.totals_recorded);
    assert_eq!((cpu.peak_allocated_bytes, cpu.peak_at_us), (40, 20.0));
    assert_eq!(
        cpu.live_at_peak,
        [group("aten::linear", linear_0, forward, 40, 1)]
    );
    assert_eq!(cpu.before_trace_at_peak_bytes, 0);
}

#[test]
fn memory_report_before_the_first_record_holds_nothing_of_the_trace() {
    let t = common::load("edge/memory_live.json");
    let r = memory(&t, &Scope::Whole, At::Time(1_000)).unwrap();
    let cuda = device(&r.devices, "CUDA:0");
    assert_eq!(cuda.allocated_at_bytes, Some(0));
    assert_eq!(cuda.live_at.as_deref(), Some(&[][..]));
    // A trace without records has no devices.
    let plain = common::load("edge/flows.json");
    assert!(memory(&plain, &Scope::Whole, At::Peak)
        .unwrap()
        .devices
        .is_empty());
}

/// Per device in the raw JSON: the highest `Total Allocated` and
/// `Total Reserved`, and the number of records.
fn raw_peaks(json: &[u8]) -> Vec<(String, i64, i64, u64)> {
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut out: Vec<(String, i64, i64, u64)> = Vec::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["name"] != "[memory]" {
            continue;
        }
        let a = &e["args"];
        let name = match (
            a["Device Type"].as_i64().unwrap(),
            a["Device Id"].as_i64().unwrap(),
        ) {
            (0, _) => "CPU".to_string(),
            (1, id) => format!("CUDA:{id}"),
            other => panic!("device {other:?}"),
        };
        let alloc = a["Total Allocated"].as_i64().unwrap();
        let reserved = a["Total Reserved"].as_i64().unwrap();
        match out.iter_mut().find(|x| x.0 == name) {
            Some(x) => {
                x.1 = x.1.max(alloc);
                x.2 = x.2.max(reserved);
                x.3 += 1;
            }
            None => out.push((name, alloc, reserved, 1)),
        }
    }
    out.sort();
    out
}

#[test]
fn memory_report_peaks_equal_the_records_on_real_captures() {
    let dir = common::fixtures().join("torch-memory");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".pt.trace.json.gz"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for f in files {
        let rel = format!("torch-memory/{f}");
        let t = common::load(&rel);
        let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
        let got: Vec<(String, i64, i64, u64)> = r
            .devices
            .iter()
            .map(|d| {
                (
                    d.device.clone(),
                    d.peak_allocated_bytes,
                    d.peak_reserved_bytes,
                    d.records,
                )
            })
            .collect();
        assert_eq!(got, raw_peaks(&common::gunzip(&rel)), "{f}");
        for d in &r.devices {
            let live: i64 = d.live_at_peak.iter().map(|g| g.bytes).sum();
            // What the trace's allocations explain never exceeds what the
            // allocator says it holds.
            assert!(d.before_trace_at_peak_bytes >= 0, "{f} {}", d.device);
            assert_eq!(
                live + d.before_trace_at_peak_bytes,
                d.peak_allocated_bytes,
                "{f}"
            );
            assert!(
                d.live_at_peak.iter().all(|g| g.bytes > 0 && g.count > 0),
                "{f}"
            );
            assert!(d.never_freed_bytes >= 0, "{f}");
            let churn: u64 = d.churn.iter().map(|c| c.allocations).sum();
            assert!(churn <= d.records, "{f}");
        }
    }
}

fn bytes_by(list: &[CategoryBytes]) -> Vec<(&str, i64)> {
    list.iter()
        .map(|c| (c.category.as_str(), c.bytes))
        .collect()
}

#[test]
fn raw_memory_timeline_gives_each_allocation_its_category() {
    let t = with_timeline("edge/memory_live.json", "edge/memory_live.raw.json");
    assert_eq!(t.memory_timelines.len(), 1);
    // The row with action 9 is not one PyTorch writes: counted, left out.
    assert_eq!(t.memory_timelines[0].unknown_rows, 1);
    let r = memory(&t, &Scope::Whole, At::Time(57_000)).unwrap();
    let cuda = device(&r.devices, "CUDA:0");
    let c = cuda.categories.as_ref().unwrap();
    // The create at 99.999 µs has no record: it joins nothing, and says so.
    assert_eq!((c.creates, c.creates_joined), (4, 3));
    assert_eq!((c.destroys, c.destroys_joined), (2, 2));
    assert_eq!(c.preexisting_bytes, 950);
    // PyTorch's running sums at the peak (150 µs) and at 57 µs; the version
    // increment at 160 µs moves nothing between categories here.
    assert_eq!(
        bytes_by(&c.at_peak),
        [
            ("parameter", 950),
            ("optimizer state", 300),
            ("temporary", 207)
        ]
    );
    assert_eq!(
        bytes_by(c.at.as_deref().unwrap()),
        [("parameter", 950), ("temporary", 200), ("activation", 100)]
    );
    let linear_0 = Some("nn.Module: Linear_0");
    let forward = Some("model.py(12): forward");
    assert_eq!(
        cuda.live_at_peak,
        [
            with_category(group("optimizer", None, None, 300, 1), "optimizer state"),
            with_category(group("aten::relu", linear_0, forward, 200, 1), "temporary"),
        ]
    );
    // The timeline's lanes: allocated and reserved per device.
    let lanes = counter_series(&t);
    let last = |name: &str| {
        let lane = lanes
            .iter()
            .find(|l| l.1 == name)
            .unwrap_or_else(|| panic!("{name}"));
        *lane.2.last().unwrap()
    };
    assert_eq!(last("memory allocated · CUDA:0"), (170_000, 1150.0));
    assert_eq!(last("memory reserved · CUDA:0"), (170_000, 4000.0));
    assert_eq!(last("memory allocated · CPU"), (20_000, 40.0));
    assert!(!lanes.iter().any(|l| l.1 == "memory reserved · CPU"));
    // The CPU's records join nothing: no categories there.
    assert!(device(&r.devices, "CPU").categories.is_none());
}

#[test]
fn raw_memory_timeline_alone_or_broken_says_what_it_is() {
    let raw = std::fs::read(common::fixtures().join("edge/memory_live.raw.json")).unwrap();
    let e = import_bytes(&raw, ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("raw memory timeline"), "{e}");
    assert!(e.contains("open it together with that trace"), "{e}");
    let trace = std::fs::read(common::fixtures().join("edge/memory_live.json")).unwrap();
    let broken = b"[[1, 2, 3, 4], [5, 6".to_vec();
    let e = import_set(
        vec![("t.json".into(), trace), ("m.raw.json".into(), broken)],
        ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not a raw memory timeline"), "{e}");
}

/// Per capture: the raw timeline's rows as PyTorch wrote them.
fn raw_rows(rel: &str) -> Vec<[i64; 4]> {
    serde_json::from_slice(&common::gunzip(rel)).unwrap()
}

#[test]
fn raw_memory_timelines_join_every_record_on_real_captures() {
    let dir = common::fixtures().join("torch-memory");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let n = e.unwrap().file_name().into_string().unwrap();
            n.strip_suffix(".memory_timeline.raw.json.gz")
                .map(String::from)
        })
        .collect();
    stems.sort();
    assert!(stems.len() >= 6, "{stems:?}");
    for stem in stems {
        let raw_rel = format!("torch-memory/{stem}.memory_timeline.raw.json.gz");
        let t = with_timeline(&format!("torch-memory/{stem}.pt.trace.json.gz"), &raw_rel);
        let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
        let joined: Vec<&DeviceMemory> = r
            .devices
            .iter()
            .filter(|d| d.categories.is_some())
            .collect();
        assert_eq!(joined.len(), 1, "{stem}: one device per timeline");
        let d = joined[0];
        let c = d.categories.as_ref().unwrap();
        // Every CREATE and DESTROY is a [memory] record of the trace.
        assert!(c.creates > 0, "{stem}");
        assert_eq!(c.creates_joined, c.creates, "{stem}");
        assert_eq!(c.destroys_joined, c.destroys, "{stem}");
        // PyTorch's sums at the peak, from the file's rows directly.
        let rows = raw_rows(&raw_rel);
        let peak_epoch =
            t.time_span_ns().unwrap().0 + t.clock_offset_ns + (d.peak_at_us * 1e3).round() as i64;
        let mut sums = [0i64; 8];
        for row in rows.iter().filter(|r| r[0] <= peak_epoch) {
            sums[row[3] as usize] += row[2];
        }
        let want: i64 = sums.iter().sum();
        let got: i64 = c.at_peak.iter().map(|x| x.bytes).sum();
        assert_eq!(got, want, "{stem}");
        // Every allocation live at the peak that the timeline created has
        // its category.
        let categorised: u64 = d
            .live_at_peak
            .iter()
            .filter(|g| g.category.is_some())
            .map(|g| g.count)
            .sum();
        let live: u64 = d.live_at_peak.iter().map(|g| g.count).sum();
        assert!(categorised > 0 && categorised <= live, "{stem}");
    }
}

/// Neuron HBM (`device_mem_usage`): per HBM the peak of `total_bytes` (the
/// sum of the categories on rows without it), the categories then, the
/// capacity, and spill (`dram_spill` + `dma_rings_spill`); every number
/// worked out from `edge/neuron_hbm_two.json` by hand.
#[test]
fn neuron_hbm_usage_per_hbm_with_its_peak_categories_and_spill() {
    let t = common::load("edge/neuron_hbm_two.json");
    assert!(tracelane_core::analysis::memory::has_memory(&t));
    // The trace starts at the first sample (1,000,000,000 ns); 1.5 µs
    // falls between the samples at 1 and 2 µs.
    let r = memory(&t, &Scope::Whole, At::Time(1_000_001_500)).unwrap();
    assert!(r.devices.is_empty());
    let pairs = |v: &[(String, f64)]| -> Vec<(String, f64)> { v.to_vec() };
    let s = |c: &str, b: f64| (c.to_string(), b);
    assert_eq!(r.hbm.len(), 2);
    let h0 = &r.hbm[0];
    assert_eq!(h0.hbm, "HBM 0 of device 0");
    assert_eq!((h0.samples, h0.peak_bytes, h0.peak_at_us), (3, 5000.0, 1.0));
    assert_eq!(h0.capacity_bytes, Some(10000.0));
    assert_eq!(
        pairs(&h0.at_peak),
        [
            s("tensors", 2500.0),
            s("weights", 2000.0),
            s("dram_spill", 500.0)
        ]
    );
    assert_eq!(
        (h0.spill_peak_bytes, h0.spill_samples, h0.spill_first_at_us),
        (500.0, 1, Some(1.0))
    );
    let at = h0.at.as_ref().unwrap();
    assert_eq!((at.at_us, at.total_bytes), (1.0, 5000.0));
    // HBM 1 (hbm_idx written as a string) has no total_bytes: 100 + 200 at
    // 0 µs, 700 + 200 + 64 at 2 µs.
    let h1 = &r.hbm[1];
    assert_eq!(h1.hbm, "HBM 1 of device 0");
    assert_eq!((h1.samples, h1.peak_bytes, h1.peak_at_us), (2, 964.0, 2.0));
    assert_eq!(
        pairs(&h1.at_peak),
        [
            s("tensors", 700.0),
            s("weights", 200.0),
            s("dma_rings_spill", 64.0)
        ]
    );
    assert_eq!(
        (h1.spill_peak_bytes, h1.spill_samples, h1.spill_first_at_us),
        (64.0, 1, Some(2.0))
    );
    let at = h1.at.as_ref().unwrap();
    assert_eq!(
        (at.at_us, at.total_bytes, pairs(&at.by_category)),
        (0.0, 300.0, vec![s("weights", 200.0), s("tensors", 100.0)])
    );
}

/// The real Explorer shape: the peak is the largest `total_bytes` row.
#[test]
fn neuron_hbm_peak_on_the_explorer_system_profile() {
    let t = common::load("neuron-wild/system_profile.explorer.json");
    let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
    assert_eq!(r.hbm.len(), 1);
    let h = &r.hbm[0];
    assert_eq!((h.samples, h.peak_bytes), (5, 11_643_145_024.0));
    assert_eq!(h.peak_at_us, 8000.0);
    assert_eq!((h.spill_peak_bytes, h.spill_samples), (55_331_648.0, 5));
    assert_eq!(h.capacity_bytes, Some(103_079_215_104.0));
}

#[test]
fn memory_view_of_a_trace_without_hbm_has_no_hbm_table() {
    // The page lays out hbm_sections as they come: none for no HBM (an
    // empty "Neuron HBM" table once headed a CUDA trace's devices).
    assert!(tracelane_core::export::hbm_sections(&[]).is_empty());
    let t = common::load("torch-memory/mem_train_cuda.pt.trace.json.gz");
    let r = memory(&t, &Scope::Whole, At::Peak).unwrap();
    let titles: Vec<String> = tracelane_core::export::memory_sections(&r, 10)
        .into_iter()
        .map(|s| s.title)
        .collect();
    assert!(!titles.iter().any(|t| t.contains("HBM")), "{titles:?}");
}
