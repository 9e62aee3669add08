//! `tracelane export --parquet`: a run's columns for DuckDB and friends.

use std::time::Instant;

use crate::args::Flags;
use crate::rank_set::{rank_summaries, trace_files, SetInput};

/// `export TRACE_OR_DIR... --parquet OUT_DIR [--job NAME]`: the columnar
/// tables of every trace, `OUT_DIR/<table>/rank=<N>/part-0.parquet`.
pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    use tracelane_core::columnar;
    let out_dir = flags
        .parquet
        .as_deref()
        .ok_or("export needs --parquet OUT_DIR")?;
    let files = trace_files(&flags.positional)?;
    let job = flags.job.clone().unwrap_or_else(|| {
        let first = std::path::Path::new(&flags.positional[0]);
        if let Some(SetInput::Archive(a)) = files.first() {
            let base = a.rsplit(['/', '\\']).next().unwrap_or(a);
            return tracelane_core::import::archive::set_stem(a)
                .unwrap_or(base)
                .to_string();
        }
        let named = if first.is_dir() {
            Some(first)
        } else {
            first.parent()
        };
        named
            .and_then(|p| p.file_name())
            .map_or("job".to_string(), |n| n.to_string_lossy().to_string())
    });
    let root = std::path::Path::new(out_dir);
    let write = |rel: &str, bytes: &[u8]| -> Result<(), String> {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    // Each trace's own tables while its model is loaded, under a
    // placeholder for its rank (known once every trace is summarised).
    let pending = |table: &str, k: usize| format!("{table}/_pending-{k}");
    let started = Instant::now();
    let summaries = rank_summaries(&files, flags, &|k, t| {
        for (table, bytes) in columnar::trace_tables(t, &job)? {
            write(&format!("{}/part-0.parquet", pending(table, k)), &bytes)?;
        }
        Ok(())
    })?;
    let (file_of, summaries): (Vec<usize>, Vec<_>) = summaries.into_iter().unzip();
    let report = tracelane_core::analysis::ranks::ranks(&summaries);
    for (j, row) in report.ranks.iter().enumerate() {
        for table in ["slices", "device_events", "op_table"] {
            let from = root.join(pending(table, file_of[row.input]));
            let to = root.join(format!("{table}/rank={}", row.rank));
            if to.exists() {
                std::fs::remove_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
            }
            std::fs::rename(&from, &to).map_err(|e| format!("{}: {e}", to.display()))?;
        }
        for (table, bytes) in columnar::rank_tables(&report, j, &summaries[row.input], &job)? {
            write(&columnar::table_path(table, row.rank), &bytes)?;
        }
    }
    eprintln!(
        "wrote {} tables × {} ranks to {out_dir} (job {job:?}, {}) in {:.2} s",
        columnar::TABLES.len(),
        report.ranks.len(),
        report.rank_source.describe(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
