//! The page (the browser's main thread): leptos components and the client
//! of the workers. Modules depend downwards only — `app` on the views,
//! the views on `state`, `client` and `dom` — so no view reaches back into
//! the root component.
//!
//! | module | what it is |
//! |---|---|
//! | [`app`] | mounts the app: drop zone, status, tabs, the active trace's view |
//! | [`imports`] | the import queue and the two workers' lifecycle and events |
//! | [`client`] | questions to the primary worker, awaited by request id |
//! | [`state`] | the page's signals ([`state::Ui`]) |
//! | [`dom`] | window, performance measures, downloads |
//! | [`ranks`] | a distributed run: the pool of workers that summarise its ranks, and the Ranks view |
//! | [`report`] | renders a report a worker laid out as tables |
//! | [`library`] | a team's trace library: the list a deployment carries, searched and opened |
//! | [`link`] | the view kept in the URL hash: links that reopen it, back / forward |
//! | [`offline`] | the service worker, the new-version banner, files the installed app is handed |
//! | [`summary`], [`op_table`], [`timeline`], [`analyses`], [`compare`], [`memory`] | the views |

pub mod analyses;
pub mod app;
pub mod client;
pub mod compare;
pub mod compare_align;
pub mod compare_snapshots;
pub mod device;
pub mod dom;
pub mod frames;
pub mod imports;
pub mod library;
pub mod link;
pub mod memory;
pub mod memory_bands;
pub mod offline;
pub mod op_table;
pub mod rank_set;
pub mod ranks;
pub mod ranks_panel;
pub mod report;
pub mod sources;
pub mod state;
pub mod summary;
pub mod timeline;
pub mod widgets;
