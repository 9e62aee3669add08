//! The comparison view's data: which variants the page asks for, and the
//! core's measurements in a form the page renders (serialisable, times in
//! ns). Pure, tested natively.

use serde::{Deserialize, Serialize};
use tracelane_core::analysis::compare::{self, diff, headline, measure, ratio, Variant};
use tracelane_core::analysis::Scope;
use tracelane_core::Trace;

/// One variant to measure: an imported trace (by import id) and a region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantSpec {
    pub trace: u32,
    pub file: String,
    pub region: Scope,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MappedOpView {
    pub name: String,
    pub dur_ns: i64,
    pub inner: Vec<String>,
    /// (name, category, duration).
    pub device: Vec<(String, String, i64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantView {
    pub label: String,
    pub file: String,
    pub region: String,
    pub occurrences: usize,
    pub wall_median_ns: i64,
    pub wall_min_ns: i64,
    pub wall_max_ns: i64,
    pub device_ns: i64,
    pub device_busy_ns: i64,
    pub device_idle_ns: i64,
    pub device_events: u64,
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub launches: u64,
    pub cpu_ops: u64,
    pub cpu_ops_all: u64,
    pub cpu_self_ns: i64,
    pub has_device: bool,
    pub map: Vec<MappedOpView>,
    /// Which occurrence (1-based, start order) the map shows: the median one.
    pub map_occurrence: usize,
    /// Candidate only: the sentence against the baseline.
    pub headline: Option<String>,
    /// Candidate ÷ baseline per occurrence: device time, device events,
    /// launches, CPU ops, CPU time (`None`: baseline zero).
    pub ratios: Vec<(String, Option<f64>)>,
}

impl VariantView {
    /// `value` per occurrence.
    pub fn per(&self, value: f64) -> f64 {
        value / self.occurrences.max(1) as f64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffRowView {
    pub kind: String,
    pub name: String,
    pub baseline_count: f64,
    pub baseline_ns: f64,
    pub candidate_count: f64,
    pub candidate_ns: f64,
    pub status: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ComparisonView {
    /// Baseline first.
    pub variants: Vec<VariantView>,
    /// `diffs[k]`: candidate `k + 1` against the baseline.
    pub diffs: Vec<Vec<DiffRowView>>,
    pub markdown: String,
    pub json: String,
}

/// Labels: the region when all variants come from one trace, the file when
/// the regions are alike, else both.
fn labels(specs: &[VariantSpec]) -> Vec<String> {
    let file_label = |f: &str| {
        f.trim_end_matches(".gz")
            .trim_end_matches(".json")
            .trim_end_matches(".pt.trace")
            .to_string()
    };
    let one_trace = specs.iter().all(|s| s.trace == specs[0].trace);
    let same_region = specs.iter().all(|s| s.region == specs[0].region);
    specs
        .iter()
        .map(|s| {
            let region = s.region.label();
            if one_trace {
                region
            } else if same_region {
                file_label(&s.file)
            } else {
                format!("{} · {region}", file_label(&s.file))
            }
        })
        .collect()
}

fn view(v: &Variant, base: Option<&Variant>) -> VariantView {
    let ratios = match base {
        Some(b) => vec![
            (
                "device time".to_string(),
                ratio(b, b.device_ns as f64, v, v.device_ns as f64),
            ),
            (
                "device events".to_string(),
                ratio(b, b.device_events as f64, v, v.device_events as f64),
            ),
            (
                "launches".to_string(),
                ratio(b, b.launches as f64, v, v.launches as f64),
            ),
            (
                "CPU ops".to_string(),
                ratio(b, b.cpu_ops as f64, v, v.cpu_ops as f64),
            ),
            (
                "CPU time in ops".to_string(),
                ratio(b, b.cpu_self_ns as f64, v, v.cpu_self_ns as f64),
            ),
        ],
        None => Vec::new(),
    };
    VariantView {
        label: v.label.clone(),
        file: v.file.clone(),
        region: v.region.label(),
        occurrences: v.occurrences,
        wall_median_ns: v.wall_median_ns(),
        wall_min_ns: v.wall_min_ns(),
        wall_max_ns: v.wall_max_ns(),
        device_ns: v.device_ns,
        device_busy_ns: v.device_busy_ns,
        device_idle_ns: v.device_idle_ns,
        device_events: v.device_events,
        kernels: v.kernels,
        memcpys: v.memcpys,
        memsets: v.memsets,
        launches: v.launches,
        cpu_ops: v.cpu_ops,
        cpu_ops_all: v.cpu_ops_all,
        cpu_self_ns: v.cpu_self_ns,
        has_device: v.trace_has_device,
        map: v
            .map
            .iter()
            .map(|m| MappedOpView {
                name: m.name.clone(),
                dur_ns: m.dur_ns,
                inner: m.inner.clone(),
                device: m
                    .device
                    .iter()
                    .map(|d| (d.name.clone(), d.category.to_string(), d.dur_ns))
                    .collect(),
            })
            .collect(),
        map_occurrence: v.map_occurrence + 1,
        headline: base.map(|b| headline(b, v)),
        ratios,
    }
}

/// Measures every variant (the first is the baseline) on its trace.
pub fn compare_traces<'a>(
    specs: &[VariantSpec],
    trace_of: impl Fn(u32) -> Option<&'a Trace>,
) -> Result<ComparisonView, String> {
    if specs.len() < 2 {
        return Err("a comparison needs at least two variants".into());
    }
    let labels = labels(specs);
    let mut variants = Vec::new();
    for (spec, label) in specs.iter().zip(&labels) {
        let t = trace_of(spec.trace)
            .ok_or_else(|| format!("{}: this trace is no longer open", spec.file))?;
        variants.push(
            measure(t, &spec.region, label, &spec.file)
                .map_err(|e| format!("{}: {e}", spec.file))?,
        );
    }
    let base = &variants[0];
    let diffs = variants[1..]
        .iter()
        .map(|c| {
            diff(base, c)
                .into_iter()
                .map(|r| DiffRowView {
                    kind: r.kind.to_string(),
                    name: r.name,
                    baseline_count: r.baseline_count,
                    baseline_ns: r.baseline_ns,
                    candidate_count: r.candidate_count,
                    candidate_ns: r.candidate_ns,
                    status: r.status.as_str().to_string(),
                })
                .collect()
        })
        .collect();
    Ok(ComparisonView {
        variants: variants
            .iter()
            .enumerate()
            .map(|(k, v)| view(v, (k > 0).then_some(base)))
            .collect(),
        diffs,
        markdown: compare::to_markdown(&variants),
        json: serde_json::to_string_pretty(&compare::to_json(&variants)).unwrap_or_default(),
    })
}

/// An open trace as the comparison sees it: import id, file name, region
/// names with their occurrences (most frequent first).
pub type OpenTrace = (u32, String, Vec<(String, u64)>);

/// The variants to start with: the region-name stem (`rmsnorm_naive`,
/// `rmsnorm_fused` → `rmsnorm`) that the most open traces share, each trace
/// on its most frequent region with that stem; else every trace, whole.
pub fn default_variants(traces: &[OpenTrace]) -> Vec<VariantSpec> {
    let stem = |n: &str| match n.rfind(['_', '-', ' ', '.']) {
        Some(k) if k > 0 => n[..k].to_string(),
        _ => n.to_string(),
    };
    let usable = |n: &str| !n.starts_with("ProfilerStep#") && !n.starts_with("## ");
    // For each stem, the traces that have a region with it.
    let mut stems: Vec<(String, Vec<usize>)> = Vec::new();
    for (k, (_, _, regions)) in traces.iter().enumerate() {
        for (name, _) in regions.iter().filter(|(n, _)| usable(n)) {
            let s = stem(name);
            match stems.iter_mut().find(|(x, _)| *x == s) {
                Some((_, ks)) if ks.contains(&k) => {}
                Some((_, ks)) => ks.push(k),
                None => stems.push((s, vec![k])),
            }
        }
    }
    // Most traces first; among equals, the stem seen first.
    let best = stems.into_iter().filter(|(_, ks)| ks.len() >= 2).fold(
        None::<(String, Vec<usize>)>,
        |best, cand| match best {
            Some(b) if b.1.len() >= cand.1.len() => Some(b),
            _ => Some(cand),
        },
    );
    if let Some((s, ks)) = best {
        return ks
            .into_iter()
            .filter_map(|k| {
                let (id, file, regions) = &traces[k];
                // Regions come most frequent first.
                let name = regions
                    .iter()
                    .find(|(n, _)| usable(n) && stem(n) == s)?
                    .0
                    .clone();
                Some(VariantSpec {
                    trace: *id,
                    file: file.clone(),
                    region: Scope::named(&name),
                })
            })
            .collect();
    }
    traces
        .iter()
        .take(4)
        .map(|(trace, file, _)| VariantSpec {
            trace: *trace,
            file: file.clone(),
            region: Scope::Whole,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    fn load(bytes: &[u8]) -> Trace {
        tracelane_core::import_bytes(bytes, Default::default()).unwrap()
    }

    #[test]
    fn the_demo_trio_is_compared_on_its_regions_by_default() {
        let traces = [
            (
                1,
                "rmsnorm_naive_cpu.pt.trace.json.gz".to_string(),
                vec![("rmsnorm_naive".to_string(), 5)],
            ),
            (
                2,
                "rmsnorm_fused_cpu.pt.trace.json.gz".to_string(),
                vec![("rmsnorm_fused".to_string(), 5)],
            ),
            (
                3,
                "rmsnorm_compiled_cpu.pt.trace.json.gz".to_string(),
                vec![("rmsnorm_compiled".to_string(), 5)],
            ),
            (
                4,
                "hta_amd_mi250_rocm.json.gz".to_string(),
                vec![("ProfilerStep#4".to_string(), 1)],
            ),
        ];
        let specs = default_variants(&traces);
        assert_eq!(specs.iter().map(|s| s.trace).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(
            specs[2].region,
            Scope::Region {
                name: "rmsnorm_compiled".into()
            }
        );
        assert_eq!(
            labels(&specs),
            [
                "rmsnorm_naive_cpu · rmsnorm_naive",
                "rmsnorm_fused_cpu · rmsnorm_fused",
                "rmsnorm_compiled_cpu · rmsnorm_compiled"
            ]
        );
    }

    #[test]
    fn regions_of_one_trace_compare_with_ratios_and_a_diff() {
        let t = load(include_bytes!(
            "../tests/fixtures/neuron-provisional/torchneuron_rmsnorm.json"
        ));
        let spec = |name: &str| VariantSpec {
            trace: 7,
            file: "torchneuron_rmsnorm.json".into(),
            region: Scope::named(name),
        };
        let view = compare_traces(&[spec("rmsnorm_naive"), spec("rmsnorm_compiled")], |id| {
            (id == 7).then_some(&t)
        })
        .unwrap();
        assert_eq!(view.variants[0].label, "rmsnorm_naive");
        assert_eq!(view.variants[1].device_ns, 375_500);
        assert!(view.variants[1]
            .headline
            .as_deref()
            .unwrap()
            .starts_with("device time 2,355 µs → 376 µs (6.3× less)"));
        let (name, r) = &view.variants[1].ratios[0];
        assert_eq!(name, "device time");
        assert!((r.unwrap() - 375.5 / 2355.0).abs() < 1e-12);
        assert!(view.diffs[0]
            .iter()
            .any(|d| d.name == "compiled_graph_0" && d.status == "added"));
        assert!(view.markdown.contains("| rmsnorm_compiled | candidate |"));
        assert!(compare_traces(&[spec("rmsnorm_naive")], |_| None).is_err());
    }
}
