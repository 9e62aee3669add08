//! Code both threads use that needs no browser: the messages, the summary
//! of a trace, the op table's presentation, the timeline's model and row
//! layout, the comparison's variants. Tested natively with `cargo test`.

pub mod align_view;
pub mod bands_view;
pub mod compare_view;
pub mod library;
pub mod link;
pub mod memory_view;
pub mod protocol;
pub mod ranks_view;
pub mod report_view;
pub mod table;
pub mod timeline_view;
