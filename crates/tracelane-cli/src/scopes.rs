//! The `--scope` flag: which scopes of a trace a command reports on.

use tracelane_core::analysis::Scope;
use tracelane_core::Trace;

/// The scopes `analyze --scope` names: the whole trace, every
/// `ProfilerStep#N` (in step order), or every occurrence of a region.
/// The scopes `analyze --scope` names, each with its label: the whole
/// trace, every `ProfilerStep#N` (in step order), every occurrence of a
/// region together, or each occurrence of it on its own.
pub(crate) fn analyze_scopes(
    trace: &Trace,
    scope: Option<&str>,
) -> Result<Vec<(String, Scope)>, String> {
    let labelled = |s: Scope| (s.label(), s);
    Ok(match scope.unwrap_or("whole") {
        "whole" => vec![labelled(Scope::Whole)],
        "steps" => {
            // Any host slice named ProfilerStep#N (2021 traces file them as ops).
            let mut steps: Vec<u64> = tracelane_core::analysis::scope::profiler_steps(trace)
                .into_iter()
                .filter_map(|o| {
                    trace
                        .slice_name(o.slice as usize)
                        .strip_prefix("ProfilerStep#")?
                        .parse()
                        .ok()
                })
                .collect();
            steps.sort_unstable();
            steps.dedup();
            if steps.is_empty() {
                return Err("this trace has no ProfilerStep#N annotations".into());
            }
            steps
                .into_iter()
                .map(|n| labelled(Scope::Step { n }))
                .collect()
        }
        s => {
            if let Some(name) = s.strip_prefix("region:").filter(|n| !n.is_empty()) {
                vec![labelled(Scope::named(name))]
            } else if let Some(name) = s.strip_prefix("occurrences:").filter(|n| !n.is_empty()) {
                Scope::named(name)
                    .occurrences(trace)
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .enumerate()
                    .map(|(k, o)| {
                        (
                            format!("{name} #{}", k + 1),
                            Scope::Range {
                                start_ns: o.start_ns,
                                end_ns: o.end_ns,
                            },
                        )
                    })
                    .collect()
            } else {
                return Err(format!(
                    "unknown --scope {s:?} (whole, steps, region:NAME, occurrences:NAME)"
                ));
            }
        }
    })
}

/// One scope for reports that take one (`--scope whole|region:NAME`; a
/// region named `ProfilerStep#N` is that step).
pub(crate) fn one_scope(trace: &Trace, scope: Option<&str>) -> Result<Scope, String> {
    Ok(match scope.unwrap_or("whole") {
        "whole" => Scope::Whole,
        s => match s.strip_prefix("region:").filter(|n| !n.is_empty()) {
            Some(name) => {
                let scope = Scope::named(name);
                scope.occurrences(trace).map_err(|e| e.to_string())?;
                scope
            }
            None => return Err(format!("unknown --scope {s:?} (whole, region:NAME)")),
        },
    })
}
