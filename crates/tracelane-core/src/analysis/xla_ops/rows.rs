//! The framework op table's rows and their shares, shared by the device
//! and host halves of the table.

use serde::{Deserialize, Serialize};

/// One framework op's row (`framework_op_stats`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct FrameworkOpRow {
    /// `Device` or `Host`.
    pub host_or_device: String,
    pub op_type: String,
    pub operation: String,
    pub occurrences: u64,
    pub total_time_ps: u64,
    pub self_time_ps: u64,
    /// Of the device's (or the host's) total time, idle included.
    pub self_time_percent: f64,
    pub cumulative_self_time_percent: f64,
}

/// `part` of `whole` in percent (0 of nothing).
pub(super) fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

/// Sorts rows by self time, largest first, and fills their shares.
pub(super) fn rank(rows: &mut [FrameworkOpRow], total: u64) {
    rows.sort_by_key(|r| std::cmp::Reverse(r.self_time_ps));
    let mut cum = 0.0;
    for r in rows {
        r.self_time_percent = percent(r.self_time_ps, total);
        cum += r.self_time_percent;
        r.cumulative_self_time_percent = cum;
    }
}
