//! The printer's sections (`tracelane … --format table|md`): every row is
//! as wide as its header, on traces that fill every section — a row wider
//! than its header once made `tracelane analyze` panic on the TorchNeuron
//! trace (the queue section's blocked time had no column).

mod common;

use tracelane_core::analysis::roofline::{roofline, PeakOverride};
use tracelane_core::analysis::{
    engines, frame::Mode, gate, insights, memory, ranks, regions, why_slow, Scope,
};
use tracelane_core::export::{self, Section};
use tracelane_core::import::neuron_device::import_profile;
use tracelane_core::{import_bytes, ImportOptions, Trace};

fn trace(rel: &str) -> Trace {
    if rel.ends_with(".gz") {
        import_bytes(&common::gunzip(rel), ImportOptions::default()).unwrap()
    } else {
        common::load(rel)
    }
}

fn rows_fit(what: &str, sections: &[Section]) {
    for s in sections {
        assert_eq!(s.numeric.len(), s.header.len(), "{what}: {}", s.title);
        for r in &s.rows {
            assert_eq!(r.len(), s.header.len(), "{what}: {}: {r:?}", s.title);
        }
    }
    // And both printers take them.
    export::sections_to_text(sections);
    export::sections_to_markdown(sections);
}

#[test]
fn every_sections_rows_are_as_wide_as_its_header() {
    let device =
        import_profile(common::profile_files("neuron-provisional/device_profile")).unwrap();
    let traces = [
        (
            "torchneuron",
            trace("neuron-provisional/torchneuron_rmsnorm.json"),
        ),
        (
            "hta_simple_add",
            trace("public/hta_simple_add_a100.json.gz"),
        ),
        ("nccl rank 0", trace("public/hta_nccl_2rank_rank0.json.gz")),
        (
            "module steps",
            trace("torch-regions/module_steps_cpu.pt.trace.json.gz"),
        ),
        ("device profile", device),
        (
            "memory",
            trace("torch-memory/mem_train_cuda.pt.trace.json.gz"),
        ),
    ];
    for (what, t) in &traces {
        let args = |i: usize| t.slice_args_json(i).to_string();
        for mode in [Mode::Exact, Mode::Hta, Mode::Hta05] {
            let w = why_slow(t, &Scope::Whole, mode, &args).unwrap();
            rows_fit(what, &export::analysis_sections(&w, 20));
        }
        let ins = insights::insights(t, &Scope::Whole, &args).unwrap();
        rows_fit(what, &export::insights_sections(&ins));
        rows_fit(what, &export::regions_sections(&regions::regions(t)));
        if let Ok(r) = roofline(t, &Scope::Whole, PeakOverride::default(), &args) {
            rows_fit(what, &export::roofline_sections(&r, 20));
        }
        let m = memory::memory(t, &Scope::Whole, memory::At::Time(0)).unwrap();
        rows_fit(what, &export::memory_sections(&m, 20));
        if engines::has_engines(t) {
            let e = engines::engines(t, &Scope::Whole).unwrap();
            rows_fit(what, &export::engine_sections(&e, 20));
        }
    }
    let naive = trace("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let fused = trace("torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz");
    let of = |t: &Trace| {
        insights::insights(t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap()
    };
    let (ni, fi) = (of(&naive), of(&fused));
    let g = gate::gate(&fused, &fi, &naive, &ni, Some(5.0));
    rows_fit("gate", &export::gate_sections(&g, 20));
    let set: Vec<ranks::RankSummary> = (0..4)
        .map(|r| {
            let name = format!("rank{r}.pt.trace.json.gz");
            let t = trace(&format!("synth-ranks/{name}"));
            ranks::RankSummary::of(&t, &name, &|i| t.slice_args_json(i).to_string())
        })
        .collect();
    rows_fit(
        "synth ranks",
        &export::ranks_sections(&ranks::ranks(&set), 20),
    );
}
