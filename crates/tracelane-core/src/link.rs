//! CPU op → runtime call → device work, resolved once after import.
//!
//! The rules, in the order they are tried:
//! 1. A device event's launch is the host runtime/driver call with the same
//!    `args.correlation` (CUPTI / roctracer correlation id); only when that
//!    is missing, the call an `ac2g` (or legacy `launch`) flow points from.
//! 2. A runtime call belongs to the `cpu_op` whose `External id` it carries,
//!    preferring the one that encloses it on its own thread; never a
//!    `user_annotation`.
//! 3. Old Kineto wrote `External id == correlation` for calls it could not
//!    link; then (and when a call has no External id) the op is the innermost
//!    `cpu_op` enclosing the call on its thread.
//! 4. A device event with no launch found links straight to the `cpu_op`
//!    its `External id` names (a PrivateUse1 backend's device windows).
//! 5. `gpu_user_annotation` mirrors the `user_annotation` with its External id.
//!
//! Every outcome is counted in [`crate::error::LinkCounts`].

use crate::warnings;
use rustc_hash::FxHashMap;

use crate::category::Category;
use crate::error::{Diagnostics, LinkCounts};
use crate::model::*;

/// Slices by an integer id (External id, correlation): for each id, the
/// slices that carry it in slice order. Kineto's ids are small and dense
/// (counters from 1), so they index an array directly; sparse or negative
/// ids go through a hash map.
struct Index {
    heads: Heads,
    /// For each entry (in slice order), the next entry with the same id.
    next: Vec<u32>,
    slice: Vec<u32>,
    /// Entries beyond the first of their id.
    repeats: u64,
}

enum Heads {
    /// `(first, last)` entry by id.
    Dense(Vec<(u32, u32)>),
    Sparse(FxHashMap<i64, (u32, u32)>),
}

const NO_ENTRY: u32 = u32::MAX;

impl Index {
    /// `pairs`: (id, slice), in slice order.
    fn build(pairs: Vec<(i64, u32)>) -> Index {
        let n = pairs.len();
        let max = pairs.iter().map(|&(k, _)| k).max().unwrap_or(0);
        let dense = pairs.iter().all(|&(k, _)| k >= 0) && max <= 4 * n as i64 + 1024;
        let mut heads = if dense {
            Heads::Dense(vec![(NO_ENTRY, NO_ENTRY); max.max(0) as usize + 1])
        } else {
            Heads::Sparse(FxHashMap::default())
        };
        let mut next = vec![NO_ENTRY; n];
        let mut slice = Vec::with_capacity(n);
        let mut repeats = 0;
        for (e, &(key, s)) in pairs.iter().enumerate() {
            slice.push(s);
            let head = match &mut heads {
                Heads::Dense(v) => &mut v[key as usize],
                Heads::Sparse(m) => m.entry(key).or_insert((NO_ENTRY, NO_ENTRY)),
            };
            if head.0 == NO_ENTRY {
                *head = (e as u32, e as u32);
            } else {
                next[head.1 as usize] = e as u32;
                head.1 = e as u32;
                repeats += 1;
            }
        }
        Index {
            heads,
            next,
            slice,
            repeats,
        }
    }

    /// The slices carrying `key`, in slice order.
    fn get(&self, key: i64) -> impl Iterator<Item = u32> + '_ {
        let first = match &self.heads {
            Heads::Dense(v) => usize::try_from(key)
                .ok()
                .and_then(|k| v.get(k))
                .map_or(NO_ENTRY, |h| h.0),
            Heads::Sparse(m) => m.get(&key).map_or(NO_ENTRY, |h| h.0),
        };
        std::iter::successors((first != NO_ENTRY).then_some(first), |&e| {
            let n = self.next[e as usize];
            (n != NO_ENTRY).then_some(n)
        })
        .map(|e| self.slice[e as usize])
    }

    fn first(&self, key: i64) -> Option<u32> {
        self.get(key).next()
    }
}

fn encloses(s: &Slices, outer: usize, inner: usize) -> bool {
    s.track[outer] == s.track[inner]
        && s.start_ns[outer] <= s.start_ns[inner]
        && s.end_ns(inner) <= s.end_ns(outer)
}

/// Innermost `cpu_op` ancestor of slice `i` on its own track.
fn enclosing_op(s: &Slices, i: usize) -> Option<usize> {
    let mut p = s.parent[i];
    while p != NO_SLICE {
        if s.category[p as usize] == Category::CpuOp {
            return Some(p as usize);
        }
        p = s.parent[p as usize];
    }
    None
}

pub(crate) fn link(t: &mut Trace, diag: &mut Diagnostics) {
    let s = &t.slices;
    let n = s.len();
    let host = |i: usize| t.on_host(i);

    let mut ops = Vec::new();
    let mut annotations = Vec::new();
    let mut runtimes = Vec::new();
    for i in 0..n {
        match s.category[i] {
            Category::CpuOp if s.external_id[i] != NONE_I64 => {
                ops.push((s.external_id[i], i as u32))
            }
            Category::UserAnnotation if s.external_id[i] != NONE_I64 => {
                annotations.push((s.external_id[i], i as u32))
            }
            Category::Runtime if s.correlation[i] != NONE_I64 && host(i) => {
                runtimes.push((s.correlation[i], i as u32))
            }
            _ => {}
        }
    }
    let ops = Index::build(ops);
    let annotations = Index::build(annotations);
    let runtimes = Index::build(runtimes);
    let dup = runtimes.repeats;
    diag.links.duplicate_correlation_ids = dup;
    diag.warn_n(warnings::DUPLICATE_CORRELATION, dup, String::new());

    // Flows that end on a slice (to → from), built only if some device
    // event has no launch by correlation: real traces rarely need it.
    let mut flow_from: Option<FxHashMap<u32, u32>> = None;
    let flows = &t.flows;
    let build_flow_from = || {
        let mut m: FxHashMap<u32, u32> = FxHashMap::default();
        for k in 0..flows.id.len() {
            m.entry(flows.to[k]).or_insert(flows.from[k]);
        }
        m
    };

    let mut launch = vec![NO_SLICE; n];
    let mut op = vec![NO_SLICE; n];
    let mut state = vec![LinkState::NotApplicable; n];
    let lc = &mut diag.links;

    link_runtime_calls(t, &ops, &mut op, &mut state, lc);

    // Device events → launch → op.
    let mut example_unlinked = String::new();
    for i in 0..n {
        let c = s.category[i];
        if !c.is_device() {
            continue;
        }
        if c == Category::DeviceAnnotation {
            if let Some(a) = annotations.first(s.external_id[i]) {
                op[i] = a;
                lc.device_annotations_linked += 1;
            }
            continue;
        }
        let corr = s.correlation[i];
        let mut st = LinkState::Unlinked;
        if corr != NONE_I64 {
            if let Some(r) = runtimes.first(corr) {
                launch[i] = r;
                st = LinkState::ByArgs;
            }
        }
        if launch[i] == NO_SLICE {
            if let Some(&r) = flow_from
                .get_or_insert_with(build_flow_from)
                .get(&(i as u32))
            {
                if s.category[r as usize] == Category::Runtime {
                    launch[i] = r;
                    st = LinkState::ByFlow;
                }
            }
        }
        match st {
            LinkState::ByArgs => lc.device_by_args += 1,
            LinkState::ByFlow => lc.device_by_flow += 1,
            _ if corr != NONE_I64 => {
                st = LinkState::Dangling;
                lc.device_dangling += 1;
            }
            _ => {}
        }
        if launch[i] != NO_SLICE {
            op[i] = op[launch[i] as usize];
            if op[i] != NO_SLICE
                && state[launch[i] as usize] == LinkState::ByContainment
                && st == LinkState::ByArgs
            {
                st = LinkState::ByContainment;
            }
        }
        if op[i] == NO_SLICE {
            let ext = s.external_id[i];
            if ext != NONE_I64 && ext != corr {
                if let Some(o) = ops.first(ext) {
                    op[i] = o;
                    lc.device_by_external_id += 1;
                    if st != LinkState::ByFlow {
                        st = LinkState::ByArgs;
                    }
                }
            }
        }
        if op[i] == NO_SLICE {
            lc.device_without_op += 1;
            if example_unlinked.is_empty() {
                example_unlinked = format!(
                    "{} ({}) at {} ns, correlation {}",
                    t.strings.get(s.name[i]),
                    t.strings.get(s.cat[i]),
                    s.start_ns[i],
                    if corr == NONE_I64 {
                        "none".to_string()
                    } else {
                        corr.to_string()
                    }
                );
            }
        }
        state[i] = st;
    }
    let dangling = lc.device_dangling;
    let without = lc.device_without_op;
    let rt_without = lc.runtime_without_op;
    diag.warn_n(warnings::DEVICE_DANGLING, dangling, String::new());
    diag.warn_n(warnings::DEVICE_WITHOUT_OP, without, example_unlinked);
    diag.warn_n(warnings::RUNTIME_WITHOUT_OP, rt_without, String::new());
    t.links = Links { launch, op, state };
}

/// Runtime calls → the ops that made them: by External id when the op
/// encloses the call (or, without one that does, the first op of that id),
/// else the innermost op around the call.
fn link_runtime_calls(
    t: &Trace,
    ops: &Index,
    op: &mut [u32],
    state: &mut [LinkState],
    lc: &mut LinkCounts,
) {
    let s = &t.slices;
    let host = |i: usize| t.on_host(i);
    for i in 0..s.len() {
        if s.category[i] != Category::Runtime || !host(i) {
            continue;
        }
        let (ext, corr) = (s.external_id[i], s.correlation[i]);
        let mut found = None;
        if ext != NONE_I64 {
            let enclosing = ops
                .get(ext)
                .map(|o| o as usize)
                .find(|&o| encloses(s, o, i));
            found = if ext == corr {
                // Old Kineto's "not linked" marker: trust it only if it really encloses.
                enclosing.map(|o| (o, LinkState::ByArgs))
            } else {
                enclosing
                    .or_else(|| ops.first(ext).map(|o| o as usize))
                    .map(|o| (o, LinkState::ByArgs))
            };
        }
        if found.is_none() {
            found = enclosing_op(s, i).map(|o| (o, LinkState::ByContainment));
        }
        match found {
            Some((o, st)) => {
                op[i] = o as u32;
                state[i] = st;
                if st == LinkState::ByArgs {
                    lc.runtime_by_args += 1;
                } else {
                    lc.runtime_by_containment += 1;
                }
            }
            None => {
                state[i] = LinkState::Unlinked;
                lc.runtime_without_op += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Index;

    #[test]
    fn dense_and_sparse_ids_find_the_same_slices_in_slice_order() {
        let pairs = vec![(3, 0), (1, 1), (3, 2), (7, 3), (3, 4), (1, 5)];
        let dense = Index::build(pairs.clone());
        // A negative id forces the hash map.
        let mut with_negative = pairs.clone();
        with_negative.push((-5, 6));
        let sparse = Index::build(with_negative);
        let huge = Index::build(pairs.iter().map(|&(k, s)| (k << 40, s)).collect());
        for (k, want) in [
            (3, vec![0, 2, 4]),
            (1, vec![1, 5]),
            (7, vec![3]),
            (2, vec![]),
            (9, vec![]),
        ] {
            assert_eq!(dense.get(k).collect::<Vec<_>>(), want, "dense {k}");
            assert_eq!(sparse.get(k).collect::<Vec<_>>(), want, "sparse {k}");
            assert_eq!(huge.get(k << 40).collect::<Vec<_>>(), want, "huge {k}");
        }
        assert_eq!(sparse.first(-5), Some(6));
        assert_eq!(dense.first(-5), None);
        assert_eq!(dense.repeats, 3);
        assert!(matches!(dense.heads, super::Heads::Dense(_)));
        assert!(matches!(sparse.heads, super::Heads::Sparse(_)));
        assert!(matches!(huge.heads, super::Heads::Sparse(_)));
    }
}
