//! The page's state: plain signals in one `Copy` struct, shared through
//! leptos context. Every page module reads it from here, never from the
//! root component.

use leptos::prelude::*;

use crate::shared::link::{TraceRef, TraceState};
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
    pub rank_set: RwSignal<Option<crate::page::rank_set::RankSet>>,
    pub ranks_open: RwSignal<bool>,
    /// The trace last closed and the worker's live heap bytes before and
    /// after it dropped the model.
    pub closed: RwSignal<Option<(u32, u64, u64)>>,
    /// A newer build of the app is installed and waits (the banner).
    pub update_ready: RwSignal<bool>,
    /// The trace whose critical path the timeline draws, and under which rules.
    pub path_shown: RwSignal<Option<(u32, tracelane_core::analysis::frame::Mode)>>,
    /// The view of the shown trace: 0 op table, 1 timeline, 2 analyses,
    /// 3 engines, 4 roofline.
    pub view: RwSignal<u8>,
    /// Where each import came from (what a link names it by).
    pub origins: RwSignal<Vec<(u32, TraceRef)>>,
    /// What each trace's views show (window, selection, search, table,
    /// scope), written by the views as they change, read when they mount.
    pub states: RwSignal<Vec<(u32, TraceState)>>,
    /// The comparison's variants as last chosen (the baseline first).
    pub variants: RwSignal<Vec<crate::shared::compare_view::VariantSpec>>,
    /// The comparison aligned by structure, and the node chosen (`None`:
    /// side by side).
    pub align: RwSignal<Option<crate::shared::link::AlignState>>,
    /// Bumped to mount the views again from `states` (a link applied).
    pub remount: RwSignal<u32>,
    /// A link that waits for files, or what a link could not reopen.
    pub link_note: RwSignal<Option<Note>>,
    /// The deployment's trace library (once read), and whether it shows.
    pub library: RwSignal<Option<Result<Vec<crate::shared::library::Entry>, String>>>,
    pub library_open: RwSignal<bool>,
}

impl Ui {
    /// Trace `id`'s view state (the defaults if it has none yet).
    pub fn state_of(self, id: u32) -> TraceState {
        self.states.with_untracked(|s| {
            s.iter()
                .find(|(t, _)| *t == id)
                .map(|x| x.1.clone())
                .unwrap_or_default()
        })
    }

    /// Changes trace `id`'s view state (a no-op change notifies nobody).
    pub fn update_state(self, id: u32, change: impl FnOnce(&mut TraceState)) {
        let mut next = self.state_of(id);
        change(&mut next);
        let same = self
            .states
            .with_untracked(|s| match s.iter().find(|(t, _)| *t == id) {
                Some((_, was)) => *was == next,
                None => next == TraceState::default(),
            });
        if same {
            return;
        }
        self.states
            .update(|s| match s.iter_mut().find(|(t, _)| *t == id) {
                Some((_, x)) => *x = next,
                None => s.push((id, next)),
            });
    }
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

/// What the page says about a link.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// The link names files the sender opened from disk: the receiver
    /// drops their copies (`names`), or opens the demo instead.
    NeedsFiles { names: Vec<String> },
    /// Parts of the link that could not be reopened.
    Dropped(Vec<String>),
}
