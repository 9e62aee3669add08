//! What the rocprofv3 reader keeps of a process while its records stream
//! by, and what it counts.

use rustc_hash::FxHashMap as HashMap;

use crate::model::StrId;

/// One GPU or CPU agent.
#[derive(Clone, Debug, Default)]
pub(crate) struct Agent {
    pub gpu: bool,
    /// The GPU's index among the node's GPUs.
    pub index: i64,
    pub name: String,
}

/// A process's tables, read before its records.
#[derive(Default)]
pub(crate) struct Process {
    pub pid: i64,
    pub hostname: String,
    pub agents: HashMap<u64, Agent>,
    /// Kernel id → name in the model.
    pub kernels: HashMap<u64, StrId>,
    /// Record kind → (kind name, operation names).
    pub kinds: Vec<(String, Vec<String>)>,
    /// ROCTX messages by correlation id.
    pub markers: HashMap<u64, String>,
    /// Queue handles per agent in the order first met (their lane numbers).
    pub queues: HashMap<(u64, u64), usize>,
    /// Which of the tables records need have been read: `metadata`,
    /// `agents`, `kernel_symbols`, `strings` (rocprofv3 writes them
    /// before its records; a file whose keys were sorted does not).
    pub seen: [bool; 4],
    /// Records that came before those tables: (their list, their text),
    /// read once the tables are (or the process ends).
    pub pending: Vec<(String, Vec<u8>)>,
    /// Its `memory_allocation` records, summed when the process ends.
    pub allocations: Vec<Allocation>,
}

impl Process {
    /// Whether every table a record needs has been read.
    pub fn ready(&self) -> bool {
        self.seen.iter().all(|&s| s)
    }
}

/// What the reader counted.
#[derive(Default)]
pub(crate) struct Counts {
    pub processes: u64,
    pub records: u64,
    /// Records of kinds not shown, by their list's name.
    pub other: std::collections::BTreeMap<String, u64>,
    /// Records that could not be read (no times, not an object).
    pub bad: u64,
    /// Dispatches whose kernel id no symbol names.
    pub unnamed: u64,
    pub memory: MemoryCounts,
}

/// One `memory_allocation` record, as the running sums read it
/// (`memory.rs`).
#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub alloc: bool,
    pub agent: Option<u64>,
    pub address: u64,
    pub size: u64,
    pub start: i64,
    pub end: i64,
}

/// What the running sums passed over.
#[derive(Default)]
pub(crate) struct MemoryCounts {
    pub records: u64,
    /// Records of no known operation (`NONE`, a newer kind).
    pub other_operations: u64,
    /// Allocations without an agent (rocprofv3 stops on one).
    pub no_agent: u64,
    /// Frees of a null address (HSA frees them: expected).
    pub null_frees: u64,
    /// Frees of an address no allocation in the file holds.
    pub unpaired_frees: u64,
    /// Endpoints lost to another one at the same timestamp of one agent.
    pub same_time: u64,
}
