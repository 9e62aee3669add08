//! The comparison view's "align by structure": two variants (a trace and a
//! region each) lined up op by op — the core's [`diff_with_progress`], as
//! `tracelane diff` reports it — with the aligned tree the page draws and
//! the exports the CLI writes. Pure, tested natively.

use serde::{Deserialize, Serialize};
use tracelane_core::analysis::align::{diff_with_progress, DiffOptions, DiffReport};
use tracelane_core::export;
use tracelane_core::Trace;

use super::compare_view::VariantSpec;

/// The aligned tree's rows the page draws at most (beside the ranked
/// nodes' chains).
pub const TREE_ROWS: usize = 1000;

/// Two variants aligned: the report (with its tree) and its exports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignedView {
    pub report: DiffReport,
    /// A's and B's import ids (what the page selects the nodes on).
    pub traces: [u32; 2],
    pub markdown: String,
    pub json: String,
}

/// Aligns `a` (the baseline) against `b` on their traces, calling
/// `progress(stage, done)` as it goes.
pub fn align_traces<'a>(
    a: &VariantSpec,
    b: &VariantSpec,
    trace_of: impl Fn(u32) -> Option<&'a Trace>,
    progress: &mut dyn FnMut(&'static str, f64),
) -> Result<AlignedView, String> {
    let open = |s: &VariantSpec| {
        trace_of(s.trace).ok_or_else(|| format!("{}: this trace is no longer open", s.file))
    };
    let (ta, tb) = (open(a)?, open(b)?);
    let opts = DiffOptions {
        tree_rows: TREE_ROWS,
        ..DiffOptions::default()
    };
    let report =
        diff_with_progress(ta, &a.region, tb, &b.region, &opts, progress).map_err(|e| {
            // Say which side lacks the scope.
            match a.region.occurrences(ta) {
                Err(_) => format!("{}: {e}", a.file),
                Ok(_) => format!("{}: {e}", b.file),
            }
        })?;
    let markdown = export::sections_to_markdown(&export::diff_sections(&report));
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    Ok(AlignedView {
        report,
        traces: [a.trace, b.trace],
        markdown,
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracelane_core::analysis::align::{diff, NodeKind};
    use tracelane_core::analysis::Scope;

    fn load(bytes: &[u8]) -> Trace {
        tracelane_core::import_bytes(bytes, Default::default()).unwrap()
    }

    #[test]
    fn the_demo_pair_aligns_as_the_cli_reports_it_with_its_tree() {
        let naive = load(include_bytes!(
            "../../tests/fixtures/torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz"
        ));
        let fused = load(include_bytes!(
            "../../tests/fixtures/torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz"
        ));
        let spec = |trace, file: &str, region: &str| VariantSpec {
            trace,
            file: file.into(),
            region: Scope::named(region),
        };
        let (a, b) = (
            spec(1, "naive.json.gz", "rmsnorm_naive"),
            spec(2, "fused.json.gz", "rmsnorm_fused"),
        );
        let trace_of = |id| match id {
            1 => Some(&naive),
            2 => Some(&fused),
            _ => None,
        };
        let mut stages = Vec::new();
        let view = align_traces(&a, &b, trace_of, &mut |s, _| stages.push(s)).unwrap();
        assert_eq!(stages.last(), Some(&"done"));
        assert_eq!(view.traces, [1, 2]);
        // The CLI's numbers, the tree besides.
        let cli = diff(
            &naive,
            &a.region,
            &fused,
            &b.region,
            &DiffOptions::default(),
        )
        .unwrap();
        let mut report = view.report.clone();
        assert!(!report.tree.is_empty());
        report.tree.clear();
        assert_eq!(report, cli);
        let top = &view.report.nodes[0];
        assert_eq!(top.kind, Some(NodeKind::Replaced));
        assert_eq!(top.b_ops, ["aten::rms_norm"]);
        assert!(view
            .report
            .tree
            .iter()
            .any(|r| r.id == top.id && r.kind == Some(NodeKind::Replaced)));
        assert!(view.markdown.contains("Largest differences"));
        let back: DiffReport = serde_json::from_str(&view.json).unwrap();
        assert_eq!(back, view.report);
        // A region one side lacks says which side.
        let missing = spec(2, "fused.json.gz", "rmsnorm_naive");
        let e = align_traces(&a, &missing, trace_of, &mut |_, _| {}).unwrap_err();
        assert!(e.starts_with("fused.json.gz: "), "{e}");
        let gone = spec(9, "gone.json", "x");
        assert!(align_traces(&a, &gone, trace_of, &mut |_, _| {})
            .unwrap_err()
            .contains("no longer open"));
    }
}
