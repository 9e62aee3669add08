//! `tracelane compare`: variants side by side.

use std::io::Write;

use tracelane_core::analysis::compare::{self, measure};
use tracelane_core::analysis::Scope;
use tracelane_core::Trace;

use crate::args::{Flags, USAGE};
use crate::input::load;

/// The variants `compare` measures: (file, region) pairs, by the rules in
/// the usage text.
pub(crate) fn compare_plan(
    files: &[String],
    regions: &[String],
) -> Result<Vec<(String, Scope)>, String> {
    let named = |r: &String| Scope::named(r);
    Ok(match (files.len(), regions.len()) {
        (0, _) => return Err(format!("no trace file given\n{USAGE}")),
        (_, 0) => files.iter().map(|f| (f.clone(), Scope::Whole)).collect(),
        (1, _) => regions
            .iter()
            .map(|r| (files[0].clone(), named(r)))
            .collect(),
        (_, 1) => files
            .iter()
            .map(|f| (f.clone(), named(&regions[0])))
            .collect(),
        (nf, nr) if nf == nr => files
            .iter()
            .zip(regions)
            .map(|(f, r)| (f.clone(), named(r)))
            .collect(),
        (nf, nr) => {
            return Err(format!(
            "{nf} files and {nr} --region: give one region, one per file, or several for one file"
        ))
        }
    })
}

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let plan = compare_plan(&flags.positional, &flags.regions)?;
    if plan.len() < 2 {
        return Err(
            "a comparison needs at least two variants (two files, or several --region)".into(),
        );
    }
    let one_file = plan.iter().all(|(f, _)| *f == plan[0].0);
    let file_label = |f: &str| {
        let base = f.rsplit('/').next().unwrap_or(f);
        base.trim_end_matches(".gz")
            .trim_end_matches(".json")
            .trim_end_matches(".pt.trace")
            .to_string()
    };
    let mut traces: Vec<(String, Trace)> = Vec::new();
    let mut variants = Vec::new();
    for (file, region) in &plan {
        if !traces.iter().any(|(f, _)| f == file) {
            traces.push((file.clone(), load(file, flags)?));
        }
        let t = &traces.iter().find(|(f, _)| f == file).expect("loaded").1;
        let label = if one_file {
            region.label()
        } else {
            file_label(file)
        };
        variants.push(measure(t, region, &label, file).map_err(|e| format!("{file}: {e}"))?);
    }
    let mut out = std::io::stdout().lock();
    let w = |r: std::io::Result<()>| r.map_err(|e| e.to_string());
    match flags.format.as_deref().unwrap_or("table") {
        "json" => w(writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&compare::to_json(&variants)).map_err(|e| e.to_string())?
        )),
        "md" => w(write!(out, "{}", compare::to_markdown(&variants))),
        "table" => {
            let rows = compare::table_rows(&variants);
            let header: Vec<&str> = rows[0].iter().map(|s| s.as_str()).collect();
            w(write_grid(&mut out, &header, &rows[1..], false))?;
            w(writeln!(
                out,
                "Per occurrence; the first variant is the baseline."
            ))?;
            if variants.iter().any(|v| !v.trace_has_device) {
                w(writeln!(
                    out,
                    "—: no device events in that trace (a CPU-only capture)."
                ))?;
            }
            for v in &variants[1..] {
                w(writeln!(
                    out,
                    "{} vs {}: {}",
                    v.label,
                    variants[0].label,
                    compare::headline(&variants[0], v)
                ))?;
            }
            Ok(())
        }
        other => Err(format!("unknown --format {other:?} (table, md, json)")),
    }
}

pub(crate) fn write_grid(
    out: &mut impl Write,
    header: &[&str],
    body: &[Vec<String>],
    md: bool,
) -> std::io::Result<()> {
    const NAME_MAX: usize = 60;
    let clip = |s: &str, col: usize| -> String {
        let s = if md {
            s.replace('|', "\\|")
        } else {
            s.to_string()
        };
        if col == 0 && !md && s.chars().count() > NAME_MAX {
            let t: String = s.chars().take(NAME_MAX - 3).collect();
            format!("{t}...")
        } else {
            s
        }
    };
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in body {
        for (c, cell) in row.iter().enumerate() {
            width[c] = width[c].max(clip(cell, c).chars().count());
        }
    }
    if md {
        writeln!(out, "| {} |", header.join(" | "))?;
        writeln!(
            out,
            "|{}|",
            header
                .iter()
                .enumerate()
                .map(|(c, _)| if c == 0 { "---" } else { "---:" })
                .collect::<Vec<_>>()
                .join("|")
        )?;
        for row in body {
            let cells: Vec<String> = row.iter().enumerate().map(|(c, v)| clip(v, c)).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
        return Ok(());
    }
    let sep: String = width
        .iter()
        .map(|w| "-".repeat(*w))
        .collect::<Vec<_>>()
        .join("  ");
    writeln!(out, "{sep}")?;
    let line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{:>w$}", v, w = width[c]))
            .collect::<Vec<_>>()
            .join("  ")
    };
    writeln!(
        out,
        "{}",
        line(header.iter().map(|s| s.to_string()).collect())
    )?;
    writeln!(out, "{sep}")?;
    for row in body {
        writeln!(
            out,
            "{}",
            line(row.iter().enumerate().map(|(c, v)| clip(v, c)).collect())
        )?;
    }
    writeln!(out, "{sep}")
}
