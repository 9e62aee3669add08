//! What the op table's details panel shows for one row: the device events
//! and runtime calls its calls caused, its input types, where its calls
//! sit — read from the model's links.

use serde::Serialize;

use super::ops::{pytorch_shapes_key, rewrite_name, OpRow};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE, NO_STR};

/// Aggregate of events that share a name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct NamedStats {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
}

/// What the details panel shows for one row of the op table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct OpDetails {
    /// For host rows: the device events its calls launched directly, by name.
    /// For device rows: these events themselves.
    pub device_events: Vec<NamedStats>,
    /// For host rows: the runtime/driver calls made directly. For device
    /// rows: the calls that launched them.
    pub runtime_calls: Vec<NamedStats>,
    /// Distinct `Input type` lists with how many calls had each.
    pub input_types: Vec<(String, u64)>,
    /// Where the calls sit: the enclosing op or annotation (for device rows,
    /// the op that launched them), by name.
    pub parents: Vec<(String, u64)>,
}

fn add_stats(map: &mut Vec<NamedStats>, name: &str, dur: i64) {
    match map.iter_mut().find(|s| s.name == name) {
        Some(s) => {
            s.count += 1;
            s.total_ns += dur;
            s.min_ns = s.min_ns.min(dur);
            s.max_ns = s.max_ns.max(dur);
        }
        None => map.push(NamedStats {
            name: name.to_string(),
            count: 1,
            total_ns: dur,
            min_ns: dur,
            max_ns: dur,
        }),
    }
}

fn add_count(map: &mut Vec<(String, u64)>, name: &str) {
    match map.iter_mut().find(|(n, _)| n == name) {
        Some((_, c)) => *c += 1,
        None => map.push((name.to_string(), 1)),
    }
}

/// The details of a row (matched by name, host/device, annotation and —
/// when the row has them — input shapes), from the model's links.
pub fn op_details(t: &Trace, row: &OpRow) -> OpDetails {
    let s = &t.slices;
    let n = s.len();
    let mut d = OpDetails::default();
    let matches = |i: usize| {
        let c = s.category[i];
        let device = c.is_device();
        let annotation = matches!(c, Category::UserAnnotation | Category::DeviceAnnotation);
        (device || c.is_counted_host())
            && device == row.is_device
            && annotation == row.is_user_annotation
            && rewrite_name(t.str(s.name[i])) == row.name
            && row.input_shapes.as_deref().is_none_or(|want| {
                let have = if s.input_dims[i] == NO_STR {
                    "[]".to_string()
                } else {
                    pytorch_shapes_key(t.str(s.input_dims[i]))
                };
                have == want
            })
    };
    let mut selected = vec![false; n];
    for (i, sel) in selected.iter_mut().enumerate() {
        *sel = matches(i);
    }
    let nearest_host_parent = |i: usize| {
        let mut p = s.parent[i];
        while p != NO_SLICE && !s.category[p as usize].is_counted_host() {
            p = s.parent[p as usize];
        }
        (p != NO_SLICE).then_some(p as usize)
    };
    if row.is_device {
        for i in (0..n).filter(|&i| selected[i]) {
            add_stats(&mut d.device_events, t.str(s.name[i]), s.dur_ns[i]);
            let launch = t.links.launch[i];
            if launch != NO_SLICE {
                add_stats(
                    &mut d.runtime_calls,
                    t.str(s.name[launch as usize]),
                    s.dur_ns[launch as usize],
                );
            }
            let op = t.links.op[i];
            add_count(
                &mut d.parents,
                if op == NO_SLICE {
                    "(no launching op)"
                } else {
                    t.str(s.name[op as usize])
                },
            );
        }
    } else {
        for i in 0..n {
            let op = t.links.op[i];
            if op == NO_SLICE || !selected[op as usize] {
                continue;
            }
            if s.category[i].is_device() {
                add_stats(&mut d.device_events, t.str(s.name[i]), s.dur_ns[i]);
            } else if s.category[i] == Category::Runtime {
                add_stats(&mut d.runtime_calls, t.str(s.name[i]), s.dur_ns[i]);
            }
        }
        for i in (0..n).filter(|&i| selected[i]) {
            if s.input_types[i] != NO_STR {
                add_count(&mut d.input_types, t.str(s.input_types[i]));
            }
            let parent = nearest_host_parent(i).map_or("(top level)", |p| t.str(s.name[p]));
            add_count(&mut d.parents, rewrite_name(parent));
        }
    }
    crate::sort::by_key(&mut d.device_events, &|s| std::cmp::Reverse(s.total_ns));
    crate::sort::by_key(&mut d.runtime_calls, &|s| std::cmp::Reverse(s.total_ns));
    crate::sort::by_key(&mut d.parents, &|p| std::cmp::Reverse(p.1));
    crate::sort::by_key(&mut d.input_types, &|t| std::cmp::Reverse(t.1));
    d
}
