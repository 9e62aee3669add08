//! The device op metrics the tables are made of: each op's occurrences,
//! times and costs by (program id, name), summed over planes.

use rustc_hash::FxHashMap as HashMap;

/// One HLO op's metrics, summed over planes.
#[derive(Default)]
pub(super) struct OpMetrics {
    pub(super) occurrences: u64,
    pub(super) time_ps: u64,
    /// Less nested ops' time (a TPU's ops nest; a GPU's kernels do not).
    pub(super) self_ps: u64,
    /// A TPU op's category and framework op, from its events' stats.
    pub(super) from_stats: Option<OpFromStats>,
    pub(super) flops: Option<u64>,
    pub(super) bytes: Option<u64>,
    /// An op known only by its `tf_op` stat: its type and full name.
    pub(super) tf_only: Option<(String, String)>,
}

impl OpMetrics {
    /// One more occurrence: its time, self time and costs.
    pub(super) fn add_occurrence(
        &mut self,
        time_ps: u64,
        self_ps: u64,
        flops: Option<u64>,
        bytes: Option<u64>,
    ) {
        // Saturating: a TPU's times and costs are its stats, anything.
        self.occurrences += 1;
        self.time_ps = self.time_ps.saturating_add(time_ps);
        self.self_ps = self.self_ps.saturating_add(self_ps);
        if let Some(f) = flops {
            let sum = self.flops.get_or_insert(0);
            *sum = sum.saturating_add(f);
        }
        if let Some(b) = bytes {
            let sum = self.bytes.get_or_insert(0);
            *sum = sum.saturating_add(b);
        }
    }
}

/// What a TPU op's event metadata says of it (`hlo_category`, `tf_op`).
pub(super) struct OpFromStats {
    pub(super) category: String,
    pub(super) provenance: String,
}

/// Ops by (program id, name), in the order first met.
#[derive(Default)]
pub(super) struct OpDb {
    index: HashMap<(i64, String), usize>,
    pub(super) ops: Vec<((i64, String), OpMetrics)>,
}

impl OpDb {
    pub(super) fn entry(&mut self, program: i64, name: &str) -> &mut OpMetrics {
        let key = (program, name.to_string());
        let k = match self.index.get(&key) {
            Some(&k) => k,
            None => {
                self.ops.push((key.clone(), OpMetrics::default()));
                self.index.insert(key, self.ops.len() - 1);
                self.ops.len() - 1
            }
        };
        &mut self.ops[k].1
    }
}
