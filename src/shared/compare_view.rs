//! The comparison view's data: which variants the page asks for (traces ×
//! scopes), their labels, and the core's [`Comparison`] report for them,
//! which crosses to the page as it is. Pure, tested natively.

use serde::{Deserialize, Serialize};
#[cfg(test)]
use tracelane_core::analysis::compare::DiffStatus;
use tracelane_core::analysis::compare::{measure, Comparison};
use tracelane_core::analysis::Scope;
use tracelane_core::Trace;

/// One variant to measure: an imported trace (by import id) and a region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantSpec {
    pub trace: u32,
    pub file: String,
    pub region: Scope,
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

/// Measures every variant (the first is the baseline) on its trace.
pub fn compare_traces<'a>(
    specs: &[VariantSpec],
    trace_of: impl Fn(u32) -> Option<&'a Trace>,
) -> Result<Comparison, String> {
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
    Ok(Comparison::of(variants))
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
            "../../tests/fixtures/neuron-provisional/torchneuron_rmsnorm.json"
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
        assert!(view.against_baseline(0).is_none());
        let vs = view.against_baseline(1).unwrap();
        assert!(vs
            .headline
            .starts_with("device time 2,355 µs → 376 µs (6.3× less)"));
        let (name, r) = &vs.ratios[0];
        assert_eq!(name, "device time");
        assert!((r.unwrap() - 375.5 / 2355.0).abs() < 1e-12);
        assert!(vs
            .diff
            .iter()
            .any(|d| d.name == "compiled_graph_0" && d.status == DiffStatus::Added));
        // The report crosses to the page as it is.
        let json = serde_json::to_string(&view).unwrap();
        assert_eq!(serde_json::from_str::<Comparison>(&json).unwrap(), view);
        assert!(view.markdown.contains("| rmsnorm_compiled | candidate |"));
        assert!(compare_traces(&[spec("rmsnorm_naive")], |_| None).is_err());
    }
}
