//! PyTorch's `key_averages()` table, computed from the trace file alone.
//!
//! This follows `torch/autograd/profiler.py::_parse_kineto_results` and
//! `EventList` / `FunctionEvent` / `FunctionEventAvg` in
//! `torch/autograd/profiler_util.py`:
//!
//! * events PyTorch drops by name are dropped (`_filter_name`);
//!   `ProfilerStep#N` is renamed `ProfilerStep*` (`_rewrite_name`);
//! * host events (ops, annotations, runtime/driver calls; not Python tracer
//!   frames, which the profiler keeps out of its events) form a containment
//!   tree per thread; a runtime call joins the thread of
//!   the op it belongs to, profiler overhead the process's main thread
//!   ([`super::profiler_overhead`]); a child lies entirely inside its parent
//!   (`_populate_cpu_children`, ties broken by recording order);
//! * a node whose parent has the same name and no other child is merged into
//!   it, the parent taking the node's children and device events
//!   (`_remove_dup_nodes`);
//! * CPU total = duration; CPU self = duration − children's durations;
//!   device self = the node's own device events; device total = device self +
//!   children's device totals; device events are rows of their own with
//!   device time only (`gpu_user_annotation` mirrors are rows flagged as
//!   annotations, left out of the totals and — as in PyTorch 2.11, whose
//!   Kineto links them to no op — of every op's device time); profiler
//!   overhead is given the device events of the op it happened in, which
//!   PyTorch so counts twice;
//! * a collective's c10d `Work` range (`gloo:all_reduce`, `nccl:broadcast`,
//!   … — the annotation `c10d::Work` records with `_setAsync()`) is async in
//!   PyTorch (`FunctionEvent.is_async`): it is no one's child and no one's
//!   parent, its CPU self time is 0 and no device time joins it. (PyTorch
//!   also calls an event async when it ends on another thread than it
//!   started; a trace file does not say so.)
//! * `[memory]` instants outside every host event become `[memory]` rows,
//!   and `[OutOfMemory]` instants always do;
//! * rows are keyed by name, device-or-host, annotation-or-not, and — when
//!   grouping by shape — the `Input Dims` text.

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::memory_events::{MemBytes, MemoryEvents};
use super::profiler_overhead::overhead_homes;
use super::scope::{Scope, ScopeError};
use crate::category::Category;
use crate::model::*;

/// Names `_filter_name` drops before building anything.
pub const FILTERED_NAMES: &[&str] = &[
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

#[derive(Clone, Copy, Debug, Default)]
pub struct OpTableOptions {
    /// Group by name and `Input Dims` (`group_by_input_shape=True`).
    pub by_shape: bool,
    /// Only events that start inside `[from, to)` (ns); `None`: everything.
    pub range_ns: Option<(i64, i64)>,
}

/// One row of the table, times in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct OpRow {
    pub name: String,
    /// Compact `Input Dims` JSON (`[]` when none) when grouping by shape.
    pub input_shapes: Option<String>,
    /// A device event row (kernel, copy, set, sync, device window).
    pub is_device: bool,
    pub is_user_annotation: bool,
    pub calls: u64,
    pub cpu_total_ns: i64,
    pub cpu_self_ns: i64,
    pub device_total_ns: i64,
    pub device_self_ns: i64,
    /// PyTorch's memory columns (`profile_memory=True`; see
    /// [`super::memory_events`]): net bytes allocated inside the events,
    /// CPU and device, and their self parts (total − children's totals).
    #[serde(default)]
    pub cpu_mem_bytes: i64,
    #[serde(default)]
    pub cpu_self_mem_bytes: i64,
    #[serde(default)]
    pub device_mem_bytes: i64,
    #[serde(default)]
    pub device_self_mem_bytes: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpTable {
    /// In PyTorch's order: first appearance in start-time order.
    pub rows: Vec<OpRow>,
    /// Sum of CPU self time over all rows (PyTorch's "Self CPU time total").
    pub self_cpu_total_ns: i64,
    /// Sum of device self time over device rows that are not annotations
    /// (PyTorch's "Self CUDA time total").
    pub self_device_total_ns: i64,
    /// Duration of all device events (annotations included).
    pub device_events_ns: i64,
    /// Device events with no launching op.
    pub device_without_op_ns: i64,
    /// Device time PyTorch's same-name merge drops from a parent that had
    /// device events of its own (kept to show nothing vanishes silently).
    pub device_dropped_by_merge_ns: i64,
    /// `gpu_user_annotation` time: a row of its own, no op's device time.
    pub device_annotations_ns: i64,
    /// Device time PyTorch gives a second time, to the profiler overhead
    /// that happened inside the op that launched it (see
    /// [`super::profiler_overhead`]): in the host rows' device totals twice.
    pub device_counted_twice_ns: i64,
}

/// A node of the host containment tree.
struct Node {
    slice: u32,
    /// PyTorch's `is_async` (see [`is_c10d_work`]): outside the tree.
    is_async: bool,
    parent: u32,
    children: u32,
    child_dur: i64,
    own_device: i64,
    device_total: i64,
}

/// Per node, `[memory]` bytes inside its event and inside its children —
/// kept only where the scope has memory events (two pairs of counters a
/// node were a third of the tree's memory, written for nothing on
/// traces without them).
#[derive(Default)]
struct NodeMem(Vec<[MemBytes; 2]>);

impl NodeMem {
    fn get(&self, node: usize) -> [MemBytes; 2] {
        self.0.get(node).copied().unwrap_or_default()
    }
}

const NONE: u32 = u32::MAX;

/// The profiling titles c10d's process groups give their `Work` (in
/// `ProcessGroup{Gloo,NCCL,MPI,UCC,XCCL}.cpp`): `c10d::Work`'s constructor
/// records them as an async `RecordFunction` (`_setAsync()`), which
/// `_parse_kineto_results` reads as `is_async`.
pub const C10D_WORK_PREFIXES: &[&str] = &["gloo:", "nccl:", "mpi:", "ucc:", "xccl:"];

/// Whether host event `i` is a c10d `Work` range (an async event to
/// PyTorch's `key_averages()`).
pub fn is_c10d_work(t: &Trace, i: usize) -> bool {
    t.slices.category[i] == Category::UserAnnotation && {
        let name = t.str(t.slices.name[i]);
        C10D_WORK_PREFIXES.iter().any(|p| name.starts_with(p))
    }
}

pub fn rewrite_name(name: &str) -> &str {
    if name.starts_with("ProfilerStep#") {
        "ProfilerStep*"
    } else {
        name
    }
}

pub fn op_table(t: &Trace, opts: OpTableOptions) -> OpTable {
    attribute(t, &Windows::of(opts.range_ns), DeviceCount::AsPyTorch).table(t, opts.by_shape)
}

/// How often a device event counts in the host rows' device times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceCount {
    /// PyTorch's `key_averages()`: once for its op and once more for each
    /// profiler overhead event inside that op ([`super::profiler_overhead`]).
    AsPyTorch,
    /// Once, for its op: the time an op's device work really took (what a
    /// roofline divides by).
    Once,
}

/// The op table of a scope: the events that start inside any of its
/// occurrences (every `ProfilerStep#N`, every occurrence of a region, a
/// range, or the whole trace).
pub fn op_table_in(t: &Trace, scope: &Scope, by_shape: bool) -> Result<OpTable, ScopeError> {
    op_table_counting(t, scope, by_shape, DeviceCount::AsPyTorch)
}

/// [`op_table_in`], device events counted as `count` says.
pub fn op_table_counting(
    t: &Trace,
    scope: &Scope,
    by_shape: bool,
    count: DeviceCount,
) -> Result<OpTable, ScopeError> {
    let windows = match scope {
        Scope::Whole => Windows(None),
        _ => Windows(Some(
            scope
                .occurrences(t)?
                .into_iter()
                .map(|o| (o.start_ns, o.end_ns))
                .collect(),
        )),
    };
    Ok(attribute(t, &windows, count).table(t, by_shape))
}

/// The time windows an op table counts events in (`None`: everything):
/// an event counts when it starts inside one, `[start, end)`.
struct Windows(Option<Vec<(i64, i64)>>);

impl Windows {
    fn of(range_ns: Option<(i64, i64)>) -> Windows {
        Windows(range_ns.map(|r| vec![r]))
    }

    fn contains(&self, ts: i64) -> bool {
        match &self.0 {
            None => true,
            Some(w) => w.iter().any(|&(a, b)| ts >= a && ts < b),
        }
    }
}

/// The op table by name and by name + input shapes, from one pass over the
/// containment tree (what both share: the tree, device attribution, the
/// same-name merge, memory rows) — the app shows both.
pub fn op_tables(t: &Trace, range_ns: Option<(i64, i64)>) -> (OpTable, OpTable) {
    let a = attribute(t, &Windows::of(range_ns), DeviceCount::AsPyTorch);
    (a.table(t, false), a.table(t, true))
}

/// The host tree with device time attributed, before rows are keyed.
struct Attribution {
    nodes: Vec<Node>,
    mem: NodeMem,
    alive: Vec<bool>,
    device_rows: Vec<u32>,
    mem_rows: Vec<(i64, &'static str, MemBytes)>,
    /// Device totals (the rows and self totals are filled per grouping).
    totals: OpTable,
    names: NameIds,
}

fn attribute(t: &Trace, windows: &Windows, count: DeviceCount) -> Attribution {
    let s = &t.slices;
    let n = s.len();
    let in_range = |i: usize| windows.contains(s.start_ns[i]);
    let names = NameIds::new(t);
    let is_filtered = |i: usize| names.filtered[s.name[i].0 as usize];

    // Host events, grouped by the thread PyTorch would put them on. The
    // model keeps each track sorted by (start, longest first, ops before
    // runtime calls, file order), which is PyTorch's order too; only runtime
    // calls that join their op's thread from another one need sorting in.
    let counted = |i: usize| {
        s.category[i].is_counted_host() && t.on_host(i) && !is_filtered(i) && in_range(i)
    };
    let overheads = overhead_homes(t, &counted);
    // Python frames are nodes of PyTorch's tree (children that take their
    // time and memory from the op or range around them) in the versions
    // that keep them among its events — never rows (see
    // `python_frames_in_tree`).
    let python = python_frames_in_tree(t);
    let in_tree = |i: usize| {
        counted(i)
            || (python
                && s.category[i] == Category::PythonFunction
                && !is_filtered(i)
                && in_range(i))
    };
    let order = tree_order(t, in_tree, &overheads.moved);

    let memory = MemoryEvents::of(t, &|ts| windows.contains(ts));
    let (mut nodes, node_of_slice, mut mem) = build_nodes(t, &order, &memory);

    // Device events: rows of their own, and device time of the op that
    // launched them. A `gpu_user_annotation` is linked to no op's
    // correlation id in PyTorch 2.11: a row of its own only.
    let mut table = OpTable::default();
    let mut device_rows: Vec<u32> = Vec::new();
    let mut device_of_op: FxHashMap<u32, i64> =
        overheads.op_of.values().map(|&op| (op, 0)).collect();
    for i in 0..n {
        if !s.category[i].is_device() || is_filtered(i) || !in_range(i) {
            continue;
        }
        device_rows.push(i as u32);
        let d = s.dur_ns[i];
        table.device_events_ns += d;
        if s.category[i] == Category::DeviceAnnotation {
            table.device_annotations_ns += d;
            continue;
        }
        let o = t.links.op.get(i).copied().unwrap_or(NO_SLICE);
        if let Some(sum) = device_of_op.get_mut(&o) {
            *sum += d;
        }
        match node_of_slice.get(o as usize) {
            Some(&node) if node != NONE && !nodes[node as usize].is_async => {
                nodes[node as usize].own_device += d
            }
            _ => table.device_without_op_ns += d,
        }
    }
    // Profiler overhead is given its op's device events as well (PyTorch's
    // count only).
    let mirrored = overheads
        .op_of
        .iter()
        .filter(|_| count == DeviceCount::AsPyTorch);
    for (&i, op) in mirrored {
        let node = node_of_slice[i as usize];
        let d = device_of_op[op];
        if node != NONE && d > 0 {
            nodes[node as usize].own_device += d;
            table.device_counted_twice_ns += d;
        }
    }

    let alive = remove_dup_nodes(t, &names, &mut nodes, &mut mem, &mut table);
    // Device totals bottom-up (children come after parents).
    for me in (0..nodes.len()).rev() {
        if !alive[me] {
            continue;
        }
        nodes[me].device_total += nodes[me].own_device;
        let p = nodes[me].parent;
        if p != NONE {
            let d = nodes[me].device_total;
            nodes[p as usize].device_total += d;
        }
    }

    // Memory instants PyTorch reports as rows of their own.
    let mem_rows = memory_rows(t, &nodes, &memory, windows);
    Attribution {
        nodes,
        mem,
        alive,
        device_rows,
        mem_rows,
        totals: table,
        names,
    }
}

/// Whether the trace's Python frames (`with_stack=True`) are events of
/// PyTorch's own tree, as they are since PyTorch 2.12: pytorch#178168
/// stopped filtering them out of the profiler's events, so in
/// `EventList._populate_cpu_children` they are the children of the op or
/// `record_function` range around them, which loses their time from its
/// self CPU time and the `[memory]` records inside them from its self
/// memory, and a record inside one is no `[memory]` row. `key_averages()`
/// keeps them out of its rows again from 2.14 (pytorch#188631; 2.12 and
/// 2.13 list them as rows, a noise that release fixed — we follow 2.14).
///
/// The trace does not name its PyTorch version. What tells them apart is
/// Kineto's `host_name` header key: absent in every PyTorch 2.11 trace,
/// present in 2.12, 2.13, 2.14 and 2.15 (`tools/probe_python_tree.py`
/// records the same run with each and prints both facts).
pub fn python_frames_in_tree(t: &Trace) -> bool {
    t.header.iter().any(|(k, _)| k == "host_name")
}

/// Host events in tree order, as (tree track, slice): each track's own
/// (sorted by (start, longest first, ops before runtime calls, file order),
/// which is PyTorch's order too), with the events PyTorch puts on another
/// thread sorted in there: runtime calls whose op is on another thread
/// (they join the op's thread) and profiler overhead (see
/// [`super::profiler_overhead`]).
fn tree_order(
    t: &Trace,
    counted: impl Fn(usize) -> bool,
    overhead_moves: &[(u32, u32)],
) -> Vec<(u32, u32)> {
    let s = &t.slices;
    let n = s.len();
    let mut moved: Vec<Vec<u32>> = vec![Vec::new(); t.tracks.len()];
    let mut moves_away = vec![false; if overhead_moves.is_empty() { 0 } else { n }];
    for &(i, track) in overhead_moves {
        moved[track as usize].push(i);
        moves_away[i as usize] = true;
    }
    let runtime_moves = |i: usize| {
        s.category[i] == Category::Runtime
            && t.links
                .op
                .get(i)
                .is_some_and(|&o| o != NO_SLICE && s.track[o as usize] != s.track[i])
    };
    let mut any_runtime_moved = false;
    for i in 0..n {
        if runtime_moves(i) && counted(i) {
            moved[s.track[t.links.op[i] as usize].idx()].push(i as u32);
            any_runtime_moved = true;
        }
    }
    let sort_key = |i: u32| {
        let i = i as usize;
        (
            s.start_ns[i],
            std::cmp::Reverse(s.end_ns(i)),
            u8::from(matches!(
                s.category[i],
                Category::Runtime | Category::Overhead
            )),
            s.file_order[i],
        )
    };
    // (tree track, slice) in tree order.
    let mut order: Vec<(u32, u32)> = Vec::new();
    for (k, tr) in t.tracks.iter().enumerate() {
        let own = (tr.slices.start..tr.slices.end).filter(|&i| {
            let i = i as usize;
            counted(i)
                && !(any_runtime_moved && runtime_moves(i))
                && !moves_away.get(i).copied().unwrap_or(false)
        });
        if moved[k].is_empty() {
            order.extend(own.map(|i| (k as u32, i)));
        } else {
            let mut all: Vec<u32> = own.chain(moved[k].iter().copied()).collect();
            crate::sort::by_key(&mut all, &|&i| sort_key(i));
            order.extend(all.into_iter().map(|i| (k as u32, i)));
        }
    }
    order
}

/// The call tree of the host events (PyTorch's `EventList` nesting by
/// time, per thread); c10d work is asynchronous, outside it. Each slice's
/// node (`NONE`: none).
fn build_nodes(
    t: &Trace,
    order: &[(u32, u32)],
    memory: &MemoryEvents,
) -> (Vec<Node>, Vec<u32>, NodeMem) {
    let s = &t.slices;
    let n = s.len();
    let mut nodes: Vec<Node> = Vec::with_capacity(order.len());
    let with_mem = !memory.ts_ns.is_empty();
    let mut mems = NodeMem::default();
    let mut node_of_slice: Vec<u32> = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut cur_track = None;
    for &(track, i) in order {
        let i = i as usize;
        if cur_track != Some(track) {
            cur_track = Some(track);
            stack.clear();
        }
        let (st, en) = (s.start_ns[i], s.end_ns(i));
        let me = nodes.len() as u32;
        if is_c10d_work(t, i) {
            nodes.push(Node {
                slice: i as u32,
                is_async: true,
                parent: NONE,
                children: 0,
                child_dur: 0,
                own_device: 0,
                device_total: 0,
            });
            if with_mem {
                mems.0.push([memory.within(st, en), [0, 0]]);
            }
            node_of_slice[i] = me;
            continue;
        }
        let mut parent = NONE;
        while let Some(&top) = stack.last() {
            let ts = nodes[top as usize].slice as usize;
            let top_end = s.end_ns(ts);
            if st >= top_end || en > top_end {
                stack.pop();
            } else {
                parent = top;
                break;
            }
        }
        if parent != NONE {
            let p = &mut nodes[parent as usize];
            p.children += 1;
            p.child_dur += s.dur_ns[i];
        }
        if with_mem {
            let mem = memory.within(st, en);
            if parent != NONE {
                let pc = &mut mems.0[parent as usize][1];
                *pc = [pc[0] + mem[0], pc[1] + mem[1]];
            }
            mems.0.push([mem, [0, 0]]);
        }
        nodes.push(Node {
            slice: i as u32,
            is_async: false,
            parent,
            children: 0,
            child_dur: 0,
            own_device: 0,
            device_total: 0,
        });
        node_of_slice[i] = me;
        stack.push(me);
    }
    (nodes, node_of_slice, mems)
}

/// PyTorch's `_remove_dup_nodes`: an only child with its parent's name
/// merges into it. PyTorch repeats its pass until one merges nothing; one
/// pass in `nodes`' order is that fixed point here: a parent comes before
/// its children, so when a node is reached its parent's merges are done
/// (its parent is final), and a parent's child count changes only by a
/// merge into it, which needs that count to be 1 already — no later node
/// can make an earlier one mergeable (debug builds check it with a second
/// pass). `redirect` re-points children of a merged node to the
/// surviving parent. The nodes still alive.
fn remove_dup_nodes(
    t: &Trace,
    names: &NameIds,
    nodes: &mut [Node],
    mem: &mut NodeMem,
    table: &mut OpTable,
) -> Vec<bool> {
    let s = &t.slices;
    let mut alive = vec![true; nodes.len()];
    let mut redirect: Vec<u32> = (0..nodes.len() as u32).collect();
    fn find(redirect: &mut [u32], mut x: u32) -> u32 {
        while redirect[x as usize] != x {
            let next = redirect[x as usize];
            redirect[x as usize] = redirect[next as usize];
            x = next;
        }
        x
    }
    let same_name = |a: &Node, b: &Node| {
        let (ai, bi) = (a.slice as usize, b.slice as usize);
        names.canon[s.name[ai].0 as usize] == names.canon[s.name[bi].0 as usize]
    };
    for me in 0..nodes.len() {
        if nodes[me].parent == NONE {
            continue;
        }
        let p = find(&mut redirect, nodes[me].parent);
        nodes[me].parent = p;
        if same_name(&nodes[p as usize], &nodes[me]) && nodes[p as usize].children == 1 {
            let (children, child_dur, own) = (
                nodes[me].children,
                nodes[me].child_dur,
                nodes[me].own_device,
            );
            if !mem.0.is_empty() {
                mem.0[p as usize][1] = mem.0[me][1];
            }
            let parent = &mut nodes[p as usize];
            table.device_dropped_by_merge_ns += parent.own_device;
            parent.children = children;
            parent.child_dur = child_dur;
            parent.own_device = own;
            alive[me] = false;
            redirect[me] = p;
        }
    }
    for me in 0..nodes.len() {
        if alive[me] && nodes[me].parent != NONE {
            nodes[me].parent = find(&mut redirect, nodes[me].parent);
            let p = &nodes[nodes[me].parent as usize];
            debug_assert!(
                !(same_name(p, &nodes[me]) && p.children == 1),
                "a second pass of _remove_dup_nodes would merge node {me}"
            );
        }
    }
    alive
}

/// Per interned string, what the op table asks of a name again and again.
struct NameIds {
    /// The id rows are keyed by: the string's own, or one id for every
    /// `ProfilerStep#N` ([`rewrite_name`]).
    canon: Vec<u32>,
    /// One of [`FILTERED_NAMES`].
    filtered: Vec<bool>,
}

impl NameIds {
    fn new(t: &Trace) -> NameIds {
        let n = t.strings.len();
        let step = n as u32;
        let mut canon: Vec<u32> = (0..n as u32).collect();
        for (k, c) in canon.iter_mut().enumerate() {
            let name = t.strings.get(StrId(k as u32));
            if rewrite_name(name) != name || name == "ProfilerStep*" {
                *c = step;
            }
        }
        let mut filtered = vec![false; n + 1];
        for f in FILTERED_NAMES {
            if let Some(id) = t.strings.lookup(f) {
                filtered[id.0 as usize] = true;
            }
        }
        NameIds { canon, filtered }
    }
}

/// Marks an interned `Input Dims` string not seen yet in [`shape_keys`].
const UNSEEN: u32 = u32::MAX;

/// PyTorch keys rows by shape on `str(input_shapes)`, where a TensorList
/// input (a list of shapes in the file's `Input Dims`) is an empty list:
/// the distinct keys' texts (0 is `[]`) and, per interned `Input Dims`
/// string, its key (or [`UNSEEN`] when no event has it).
fn shape_keys(t: &Trace) -> (Vec<String>, Vec<u32>) {
    let mut texts: Vec<String> = vec!["[]".to_string()];
    let mut of_dims = vec![UNSEEN; t.strings.len()];
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    ids.insert("[]".to_string(), 0);
    for d in t.slices.input_dims.iter() {
        if d == NO_STR || of_dims[d.0 as usize] != UNSEEN {
            continue;
        }
        let text = pytorch_shapes_key(t.str(d));
        let next = ids.len() as u32;
        let id = *ids.entry(text.clone()).or_insert_with(|| {
            texts.push(text);
            next
        });
        of_dims[d.0 as usize] = id;
    }
    (texts, of_dims)
}

/// A row's key: canonical name id, device, annotation and shapes, packed.
fn row_key(canon: u32, device: bool, annotation: bool, shapes: u32) -> u64 {
    ((canon as u64) << 32) | ((shapes as u64) << 2) | ((device as u64) << 1) | annotation as u64
}

/// Where a row first appears: (start, −end, file order).
type First = (i64, i64, u32);

/// The op table's rows as they are summed: found by key, each with its
/// earliest event, so they can come out in PyTorch's order (the first
/// appearance of each key in (start, −end) order) — cheaper than sorting
/// every event.
struct RowSums<'a> {
    rows: Vec<OpRow>,
    first: Vec<First>,
    /// Rows by key: keys without shapes straight by their bits (names are
    /// dense ids), the others hashed.
    direct: Vec<u32>,
    index: FxHashMap<u64, u32>,
    /// The shape keys' texts when grouping by shape.
    shape_texts: Option<&'a [String]>,
}

impl<'a> RowSums<'a> {
    fn new(t: &Trace, shape_texts: Option<&'a [String]>) -> Self {
        RowSums {
            rows: Vec::new(),
            first: Vec::new(),
            direct: vec![NONE; (t.strings.len() + 2) * 4],
            index: FxHashMap::default(),
            shape_texts,
        }
    }

    /// Adds one call to row `k` (made, named by `name`, on first sight):
    /// CPU total and self, device total and self, CPU memory total and
    /// self, device memory total and self.
    fn add(&mut self, name: &dyn Fn() -> String, k: u64, at: First, vals: [i64; 8]) {
        let slot = if k & 0xFFFF_FFFC == 0 {
            // `canon` is at most the number of strings, or u32::MAX for
            // a name never interned (a memory row without events).
            self.direct
                .get_mut(((k >> 32) as usize) * 4 + (k & 3) as usize)
        } else {
            None
        };
        let slot = match slot {
            Some(slot) => slot,
            None => self.index.entry(k).or_insert(NONE),
        };
        if *slot == NONE {
            *slot = self.rows.len() as u32;
            let shapes = ((k & 0xFFFF_FFFF) >> 2) as usize;
            self.rows.push(OpRow {
                name: name(),
                input_shapes: self.shape_texts.map(|texts| texts[shapes].clone()),
                is_device: k & 2 != 0,
                is_user_annotation: k & 1 != 0,
                calls: 0,
                cpu_total_ns: 0,
                cpu_self_ns: 0,
                device_total_ns: 0,
                device_self_ns: 0,
                cpu_mem_bytes: 0,
                cpu_self_mem_bytes: 0,
                device_mem_bytes: 0,
                device_self_mem_bytes: 0,
            });
            self.first.push(at);
        }
        let row = *slot as usize;
        self.first[row] = self.first[row].min(at);
        let r = &mut self.rows[row];
        r.calls += 1;
        r.cpu_total_ns += vals[0];
        r.cpu_self_ns += vals[1];
        r.device_total_ns += vals[2];
        r.device_self_ns += vals[3];
        r.cpu_mem_bytes += vals[4];
        r.cpu_self_mem_bytes += vals[5];
        r.device_mem_bytes += vals[6];
        r.device_self_mem_bytes += vals[7];
    }

    /// The rows in order of their first appearance.
    fn in_order(self) -> Vec<OpRow> {
        let first = self.first;
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        crate::sort::by_key(&mut order, &|&r| first[r]);
        let mut rows: Vec<Option<OpRow>> = self.rows.into_iter().map(Some).collect();
        order.into_iter().filter_map(|r| rows[r].take()).collect()
    }
}

impl Attribution {
    /// The rows, keyed by name (and input shapes when `by_shape`).
    fn table(&self, t: &Trace, by_shape: bool) -> OpTable {
        let s = &t.slices;
        let (nodes, alive, device_rows, mem_rows) =
            (&self.nodes, &self.alive, &self.device_rows, &self.mem_rows);
        let mut table = self.totals.clone();
        let (shape_texts, shape_of_dims) = if by_shape {
            shape_keys(t)
        } else {
            (Vec::new(), Vec::new())
        };
        let mut sums = RowSums::new(t, by_shape.then_some(shape_texts.as_slice()));
        let canon = &self.names.canon;
        let key_of = |i: usize, device: bool, annotation: bool| -> u64 {
            let shapes = shape_of_dims
                .get(s.input_dims[i].0 as usize)
                .copied()
                .filter(|&k| k != UNSEEN)
                .unwrap_or(0);
            row_key(canon[s.name[i].0 as usize], device, annotation, shapes)
        };
        let name_of = |i: usize| move || rewrite_name(t.str(s.name[i])).to_string();
        let at = |i: usize| (s.start_ns[i], -s.end_ns(i), s.file_order[i]);
        for (me, node) in nodes.iter().enumerate() {
            let i = node.slice as usize;
            if !alive[me] || s.category[i] == Category::PythonFunction {
                continue;
            }
            let key = key_of(i, false, s.category[i] == Category::UserAnnotation);
            let dur = s.dur_ns[i];
            let [mem, child_mem] = self.mem.get(me);
            // An async node (a c10d Work range) has no self time.
            let own = |total: i64, children: i64| if node.is_async { 0 } else { total - children };
            let vals = [
                dur,
                own(dur, node.child_dur),
                node.device_total,
                node.own_device,
                mem[0],
                own(mem[0], child_mem[0]),
                mem[1],
                own(mem[1], child_mem[1]),
            ];
            table.self_cpu_total_ns += vals[1];
            sums.add(&name_of(i), key, at(i), vals);
        }
        for &i in device_rows {
            let i = i as usize;
            let is_annotation = s.category[i] == Category::DeviceAnnotation;
            let key = key_of(i, true, is_annotation);
            let d = s.dur_ns[i];
            if !is_annotation {
                table.self_device_total_ns += d;
            }
            sums.add(&name_of(i), key, at(i), [0, 0, d, d, 0, 0, 0, 0]);
        }
        for &(ts, name, [cpu, dev]) in mem_rows {
            // Filtered names are never the name of another row's key.
            let id = t
                .strings
                .lookup(name)
                .map_or(u32::MAX, |s| canon[s.0 as usize]);
            sums.add(
                &|| name.to_string(),
                row_key(id, false, false, 0),
                (ts, -ts, u32::MAX),
                [0, 0, 0, 0, cpu, cpu, dev, dev],
            );
        }
        table.rows = sums.in_order();
        table
    }
}

/// The grouping key PyTorch uses for an event's `Input Dims` (compact
/// JSON): each top-level input that is a list of shapes (a TensorList) is
/// written as `[]`, as `KinetoEvent::shapes()` records it.
pub fn pytorch_shapes_key(dims: &str) -> String {
    let b = dims.as_bytes();
    if b.first() != Some(&b'[') {
        return dims.to_string();
    }
    let mut out = String::with_capacity(dims.len());
    out.push('[');
    let mut depth = 0usize;
    let mut elem_start = 1usize;
    let mut in_str = false;
    for (k, &c) in b.iter().enumerate().skip(1) {
        if in_str {
            in_str = c != b'"' || b[k - 1] == b'\\';
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 0 => depth -= 1,
            b',' | b']' if depth == 0 => {
                let elem = &dims[elem_start..k];
                out.push_str(if elem.starts_with("[[") { "[]" } else { elem });
                out.push(c as char);
                elem_start = k + 1;
            }
            _ => {}
        }
    }
    out
}

/// `[memory]` instants not inside any host event's `[start, end]` (any
/// thread, as `MemRecordsAcc.in_interval` checks), and every `[OutOfMemory]`.
fn memory_rows(
    t: &Trace,
    nodes: &[Node],
    memory: &MemoryEvents,
    windows: &Windows,
) -> Vec<(i64, &'static str, MemBytes)> {
    let mut out: Vec<(i64, &'static str, MemBytes)> = Vec::new();
    if let Some(oom) = t.strings.lookup("[OutOfMemory]") {
        let inst = &t.instants;
        for k in 0..inst.ts_ns.len() {
            if inst.name[k] == oom && windows.contains(inst.ts_ns[k]) {
                out.push((inst.ts_ns[k], "[OutOfMemory]", [0, 0]));
            }
        }
    }
    let mem_ts = &memory.ts_ns;
    // Coverage by a difference array over the sorted instants.
    let mut cover = vec![0i32; mem_ts.len() + 1];
    let s = &t.slices;
    // Every host CPU event PyTorch checks, merged ones included (they were
    // FunctionEvents when the memory records were matched). A child lies
    // inside its parent, so the roots of the tree cover what all cover.
    for node in nodes.iter().filter(|n| n.parent == NONE) {
        let i = node.slice as usize;
        let lo = mem_ts.partition_point(|&x| x < s.start_ns[i]);
        let hi = mem_ts.partition_point(|&x| x <= s.end_ns(i));
        if lo < hi {
            cover[lo] += 1;
            cover[hi] -= 1;
        }
    }
    let mut run = 0;
    for (k, &ts) in mem_ts.iter().enumerate() {
        run += cover[k];
        if run == 0 {
            out.push((ts, "[memory]", memory.bytes[k]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pytorch_shapes_key;

    #[test]
    fn tensor_list_inputs_key_as_empty_lists() {
        assert_eq!(pytorch_shapes_key("[[[256,256],[256,256]],[]]"), "[[],[]]");
        assert_eq!(pytorch_shapes_key("[[[256,256],[256,256]]]"), "[[]]");
        assert_eq!(pytorch_shapes_key("[[64,4096],[]]"), "[[64,4096],[]]");
        assert_eq!(pytorch_shapes_key("[]"), "[]");
        assert_eq!(pytorch_shapes_key("[[],[3]]"), "[[],[3]]");
    }
}
