//! A distributed run as the page holds it: each rank file's state, the
//! report once combined, the Parquet download's progress. Shared state
//! ([`crate::page::state::Ui::rank_set`]); the Ranks view (`ranks.rs`)
//! drives and shows it.

use crate::page::dom::window;
use crate::shared::report_view::ReportView;

#[derive(Clone, Debug, PartialEq)]
pub enum RankState {
    Queued,
    Importing,
    /// An archive being read: traces found so far.
    Unpacking(usize),
    Done,
    Failed(String),
    /// A file of a picked folder that is not a trace (an oracle, a config
    /// beside the traces): passed over, and listed.
    Skipped(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RankEntry {
    pub name: String,
    pub size: u64,
    pub bytes: u64,
    pub state: RankState,
    /// The worker's wasm memory when it finished this rank.
    pub memory: u64,
}

/// The run the Ranks view shows.
#[derive(Clone, Debug, PartialEq)]
pub struct RankSet {
    pub entries: Vec<RankEntry>,
    pub workers: usize,
    pub started_ms: f64,
    /// Every rank is in (summarised, failed or passed over).
    pub imported_ms: Option<f64>,
    pub view: Option<ReportView>,
    /// The report as JSON (`tracelane ranks --format json`'s object).
    pub json: Option<String>,
    /// The run's name in the columnar export (the folder's, else `run`).
    pub job: String,
    pub export: Option<ExportState>,
}

impl RankSet {
    /// A run starting now on `workers` workers.
    pub(crate) fn new(entries: Vec<RankEntry>, workers: usize, job: String) -> RankSet {
        RankSet {
            entries,
            workers,
            started_ms: window().performance().map_or(0.0, |p| p.now()),
            imported_ms: None,
            view: None,
            json: None,
            job,
            export: None,
        }
    }

    /// Files in (summarised, failed or passed over), and ranks summarised.
    pub(crate) fn counts(&self) -> (usize, usize) {
        let done = self
            .entries
            .iter()
            .filter(|e| {
                !matches!(
                    e.state,
                    RankState::Queued | RankState::Importing | RankState::Unpacking(_)
                )
            })
            .count();
        let summarised = self
            .entries
            .iter()
            .filter(|e| e.state == RankState::Done)
            .count();
        (done, summarised)
    }
}

/// Where the Parquet download stands.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportState {
    /// Rank files written, of all.
    Writing((usize, usize)),
    Done(String),
    Failed(String),
}
