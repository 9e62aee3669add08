//! PyTorch's raw memory timeline (`prof.export_memory_timeline(
//! "….raw.json.gz")`): one `[t_ns, action, ±bytes, category]` row per
//! allocation event of one device, with the category PyTorch's memory
//! profiler (`torch/profiler/_memory_profiler.py`) gave the tensor —
//! parameter, optimizer state, input, temporary, activation, gradient,
//! autograd detail. Read beside the profiler trace of the same run: its
//! CREATE / DESTROY times are the trace's `[memory]` records' on the epoch
//! clock (`baseTimeNanoseconds + ts × 1000`), which gives each record its
//! category ([`crate::analysis::memory`]).

use serde::{Deserialize, Serialize};

use crate::error::ImportError;

/// `_memory_profiler.Action`'s index in the raw file
/// (`export_memory_timeline_raw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// Live before the profile started (`t_ns` is −1).
    Preexisting,
    Create,
    /// A new version of a tensor: written twice, −bytes in the old
    /// version's category then +bytes in the new one's.
    IncrementVersion,
    Destroy,
}

/// `_CATEGORY_TO_INDEX`: the raw file's category numbers, in order
/// (`None`, an allocation PyTorch could not categorise, is the last).
pub const CATEGORIES: [&str; 8] = [
    "parameter",
    "optimizer state",
    "input",
    "temporary",
    "activation",
    "gradient",
    "autograd detail",
    "unknown",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// Epoch ns (−1 for a preexisting allocation).
    pub t_ns: i64,
    pub action: Action,
    /// Signed: negative on a destroy and on the old half of a version
    /// increment.
    pub bytes: i64,
    /// An index into [`CATEGORIES`].
    pub category: u8,
}

/// A raw memory timeline, in time order (ties in the file's order).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryTimeline {
    pub entries: Vec<TimelineEntry>,
    /// Rows whose action or category is not one PyTorch writes: counted,
    /// left out.
    pub unknown_rows: u64,
}

/// A raw memory timeline's first bytes: a JSON list whose first element is
/// a list of numbers (a Chrome trace's bare list holds objects).
pub fn looks_like(head: &[u8]) -> bool {
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut it = body.iter().filter(|c| !c.is_ascii_whitespace());
    matches!(
        (it.next(), it.next(), it.next()),
        (Some(b'['), Some(b'['), Some(c)) if c.is_ascii_digit() || *c == b'-'
    )
}

/// Reads a raw memory timeline (already inflated).
pub fn read(bytes: &[u8]) -> Result<MemoryTimeline, ImportError> {
    // serde_json's Value (the args reader's) rather than a reader of its
    // own: one JSON reader in the worker's download.
    let bad = |e: String| {
        ImportError::NotATrace {
        reason: format!(
            "not a raw memory timeline (a list of [t_ns, action, bytes, category], as export_memory_timeline writes to a .raw.json.gz): {e}"
        ),
    }
    };
    let rows: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
    let rows = rows.as_array().ok_or_else(|| bad("not a list".into()))?;
    let mut out = MemoryTimeline::default();
    // Epoch nanoseconds need all 64 bits: integers are read as integers.
    let int = |v: &serde_json::Value| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64));
    for row in rows {
        let Some([t, action, bytes, category]) = row.as_array().map(|r| r.as_slice()) else {
            out.unknown_rows += 1;
            continue;
        };
        let action = match action.as_i64() {
            Some(1) => Action::Preexisting,
            Some(2) => Action::Create,
            Some(3) => Action::IncrementVersion,
            Some(4) => Action::Destroy,
            _ => {
                out.unknown_rows += 1;
                continue;
            }
        };
        let (Some(t_ns), Some(bytes), Some(category)) = (
            int(t),
            int(bytes),
            category.as_u64().filter(|&c| c < CATEGORIES.len() as u64),
        ) else {
            out.unknown_rows += 1;
            continue;
        };
        out.entries.push(TimelineEntry {
            t_ns,
            action,
            bytes,
            category: category as u8,
        });
    }
    crate::sort::by_key(&mut out.entries, &|e| e.t_ns);
    Ok(out)
}
