//! The page's state: plain signals in one `Copy` struct, shared through
//! leptos context. Every page module reads it from here, never from the
//! root component.

use leptos::prelude::*;

use crate::shared::protocol::Summary;
use crate::shared::timeline_view::Highlight;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Status {
    Idle,
    Loading {
        name: String,
        bytes: u64,
        total: u64,
    },
    Failed {
        name: String,
        message: String,
    },
}

/// The page's state: plain signals, shared through context.
#[derive(Clone, Copy)]
pub struct Ui {
    pub traces: RwSignal<Vec<Summary>>,
    pub active: RwSignal<usize>,
    pub(crate) status: RwSignal<Status>,
    pub(crate) demo: RwSignal<bool>,
    pub(crate) dragging: RwSignal<bool>,
    /// The op-table row whose occurrences the timeline highlights.
    pub table_highlight: RwSignal<Option<Highlight>>,
    /// The comparison view is showing (instead of a trace).
    pub compare_open: RwSignal<bool>,
    /// Import ids of the last files opened together.
    pub last_batch: RwSignal<Vec<u32>>,
    /// The last range selected on each trace's timeline (by import id).
    pub ranges: RwSignal<Vec<(u32, (i64, i64))>>,
    /// What the timeline shows when it next opens (set by other views).
    pub focus: RwSignal<Option<Focus>>,
    /// Timeline lanes that replaced an import's (by import id): the
    /// analyses' counter lanes added.
    pub lanes: RwSignal<Vec<(u32, Vec<crate::shared::timeline_view::LaneView>)>>,
    /// The distributed run opened as ranks, and whether its view shows.
    pub rank_set: RwSignal<Option<crate::page::ranks::RankSet>>,
    pub ranks_open: RwSignal<bool>,
    /// The trace last closed and the worker's live heap bytes before and
    /// after it dropped the model.
    pub closed: RwSignal<Option<(u32, u64, u64)>>,
    /// A newer build of the app is installed and waits (the banner).
    pub update_ready: RwSignal<bool>,
    /// The trace whose critical path the timeline draws, and under which rules.
    pub path_shown: RwSignal<Option<(u32, tracelane_core::analysis::frame::Mode)>>,
}

/// A slice for the timeline to select (if any), and a window to fit (none
/// when `start_ns == end_ns`), on trace `trace`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Focus {
    pub trace: u32,
    pub slice: Option<u32>,
    pub start_ns: i64,
    pub end_ns: i64,
}
