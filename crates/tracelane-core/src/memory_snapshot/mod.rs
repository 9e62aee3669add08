//! PyTorch's allocator snapshot (`torch.cuda.memory._dump_snapshot`, after
//! `_record_memory_history`): the caching allocator's segments and blocks
//! when it was taken, and its ring of trace entries per device (alloc,
//! free_requested, free_completed, segment_alloc / free / map / unmap,
//! snapshot, oom), each with its Python stack and epoch `time_us`.
//! The structure is `torch.cuda.memory._snapshot`'s docstring
//! (`torch/cuda/memory.py`); the entries' actions are listed in
//! `torch/utils/viz/process_alloc_data.js`.
//!
//! Read with tracelane's own pickle decoder ([`crate::pickle`]): the trace
//! entries and stack frames go into columns as they are decoded
//! ([`read`]), so a snapshot of millions of entries is never a tree.
//! 31 bytes per entry: action, address, size, time, stream, stack.

pub mod bands;
mod columns;
pub mod compare;
pub mod encoding;
pub mod parts;
mod read;
pub mod replay;
pub mod report;

pub use columns::*;
pub use read::{looks_like, read, SnapshotReader};
