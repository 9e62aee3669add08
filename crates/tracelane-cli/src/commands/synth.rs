//! `tracelane synth`: synthetic traces of a given size (benchmarks).

use std::io::Write;

use crate::args::{one_file, Flags};

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let mb = flags.mb.ok_or("synth needs --mb N")?;
    if let Some(ranks) = flags.ranks {
        return synth_ranks(path, ranks, mb, flags.seed);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let n = tracelane_core::synth::write_kineto_trace(&mut out, mb * 1_000_000, flags.seed)
        .map_err(|e| format!("{path}: {e}"))?;
    out.flush().map_err(|e| format!("{path}: {e}"))?;
    eprintln!("wrote {path}: {n} bytes");
    Ok(())
}

/// `synth OUT_DIR --ranks N --mb M`: one trace per rank,
/// `OUT_DIR/rank<r>.pt.trace.json`, of about M MB each.
pub(crate) fn synth_ranks(dir: &str, ranks: usize, mb: u64, seed: u64) -> Result<(), String> {
    use tracelane_core::synth::{write_rank_set, RankSet};
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let mut outs = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let path = format!("{dir}/rank{r}.pt.trace.json");
        let file = std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?;
        outs.push(std::io::BufWriter::with_capacity(1 << 18, file));
    }
    let spec = RankSet::new(ranks, mb * 1_000_000, seed);
    let sizes = write_rank_set(&mut outs, &spec).map_err(|e| format!("{dir}: {e}"))?;
    for o in outs.iter_mut() {
        o.flush().map_err(|e| format!("{dir}: {e}"))?;
    }
    let total: u64 = sizes.iter().sum();
    eprintln!(
        "wrote {ranks} ranks to {dir}: {total} bytes; rank {} is the straggler (kernels {}× slower)",
        spec.straggler, spec.straggler_factor
    );
    Ok(())
}
