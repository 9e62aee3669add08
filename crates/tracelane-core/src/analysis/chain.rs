//! A slice's dependency chain: the framework op, the runtime calls it made
//! and the device work they launched (framework → runtime → hardware), from
//! the links resolved at import.
//!
//! For an op the chain holds every runtime call and device event that
//! belongs to it or to an op nested inside it; for a runtime call, its op and
//! what it launched; for a device event, its op and its launch.

use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

/// Where a chain item sits between framework and hardware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Op,
    Runtime,
    Device,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Op => "op",
            Role::Runtime => "runtime",
            Role::Device => "device",
        }
    }
}

/// One item of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainItem {
    pub slice: u32,
    pub role: Role,
    /// Device events with a launch: device start − launch end.
    pub launch_delay_ns: Option<i64>,
    /// The part of the launch delay during which the device stream was still
    /// busy with earlier work (the rest is launch latency on an idle stream).
    pub queue_ns: Option<i64>,
}

/// At most this many items are listed; [`Chain::more`] counts the rest.
pub const MAX_CHAIN_ITEMS: usize = 200;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chain {
    /// Op first, then each runtime call followed by the device events it
    /// launched, then device events linked to the op without a launch.
    pub items: Vec<ChainItem>,
    /// Items left out past [`MAX_CHAIN_ITEMS`].
    pub more: usize,
}

fn role_of(t: &Trace, s: usize) -> Role {
    let c = t.slices.category[s];
    if c.is_device() {
        Role::Device
    } else if c == Category::Runtime {
        Role::Runtime
    } else {
        Role::Op
    }
}

/// Is `op` the slice `root` or nested inside it on its track?
fn within(t: &Trace, mut op: u32, root: u32) -> bool {
    // Nesting depth bounds the walk.
    for _ in 0..=u16::MAX as usize {
        if op == root {
            return true;
        }
        if op == NO_SLICE {
            return false;
        }
        op = t.slices.parent[op as usize];
    }
    false
}

fn device_item(t: &Trace, d: usize) -> ChainItem {
    let launch = t.links.launch[d];
    let (delay, queue) = if launch != NO_SLICE {
        let launch_end = t.slices.end_ns(launch as usize);
        let delay = t.slices.start_ns[d] - launch_end;
        let busy_until = previous_end_on_track(t, d).unwrap_or(i64::MIN);
        let queue = (busy_until.saturating_sub(launch_end)).clamp(0, delay.max(0));
        (Some(delay), Some(queue))
    } else {
        (None, None)
    };
    ChainItem {
        slice: d as u32,
        role: Role::Device,
        launch_delay_ns: delay,
        queue_ns: queue,
    }
}

/// The latest end among the slices at the same depth that start before `s`
/// on its track (the work the stream had to finish first).
fn previous_end_on_track(t: &Trace, s: usize) -> Option<i64> {
    let range = t.track_of(s).slices.clone();
    let depth = t.slices.depth[s];
    (range.start as usize..s)
        .rev()
        .take(64)
        .filter(|&k| t.slices.depth[k] == depth)
        .map(|k| t.slices.end_ns(k))
        .max()
}

fn item(t: &Trace, s: usize) -> ChainItem {
    if role_of(t, s) == Role::Device {
        device_item(t, s)
    } else {
        ChainItem {
            slice: s as u32,
            role: role_of(t, s),
            launch_delay_ns: None,
            queue_ns: None,
        }
    }
}

/// The dependency chain of slice `s`.
pub fn dependency_chain(t: &Trace, s: usize) -> Chain {
    let mut items = Vec::new();
    match role_of(t, s) {
        Role::Device => {
            let op = t.links.op[s];
            let launch = t.links.launch[s];
            if op != NO_SLICE && op != launch {
                items.push(item(t, op as usize));
            }
            if launch != NO_SLICE {
                items.push(item(t, launch as usize));
            }
            items.push(device_item(t, s));
        }
        Role::Runtime => {
            let op = t.links.op[s];
            if op != NO_SLICE {
                items.push(item(t, op as usize));
            }
            items.push(item(t, s));
            items.extend(launched_by(t, s).map(|d| device_item(t, d)));
        }
        Role::Op => {
            items.push(item(t, s));
            let root = s as u32;
            let (a, b) = (t.slices.start_ns[s], t.slices.end_ns(s));
            // Runtime calls and device events whose op is this one or nested
            // in it (a cheap time check first: the op lies inside `s`).
            let belongs = |k: usize| {
                let op = t.links.op[k];
                op != NO_SLICE
                    && t.slices.start_ns[op as usize] >= a
                    && t.slices.start_ns[op as usize] <= b
                    && within(t, op, root)
            };
            let mut runtime: Vec<usize> = Vec::new();
            let mut unlaunched: Vec<usize> = Vec::new();
            for k in 0..t.slices.len() {
                match t.slices.category[k] {
                    Category::Runtime if belongs(k) => runtime.push(k),
                    c if c.is_device() && t.links.launch[k] == NO_SLICE && belongs(k) => {
                        unlaunched.push(k)
                    }
                    _ => {}
                }
            }
            crate::sort::by_key(&mut runtime, &|&k| (t.slices.start_ns[k], k));
            let mut device_of: std::collections::HashMap<u32, Vec<usize>> =
                std::collections::HashMap::new();
            // Device work this op owns through a launch that is not its own
            // call (an asynchronous runtime's worker: TorchNeuron's
            // executions, joined to their op through its framework mapping).
            let mut launched_elsewhere: Vec<(usize, usize)> = Vec::new();
            for d in 0..t.slices.len() {
                let l = t.links.launch[d];
                if l == NO_SLICE || !t.slices.category[d].is_device() {
                    continue;
                }
                if belongs(l as usize) {
                    device_of.entry(l).or_default().push(d);
                } else if belongs(d) {
                    launched_elsewhere.push((l as usize, d));
                }
            }
            for r in runtime {
                items.push(item(t, r));
                if let Some(ds) = device_of.get_mut(&(r as u32)) {
                    crate::sort::by_key(ds, &|&d| (t.slices.start_ns[d], d));
                    items.extend(ds.iter().map(|&d| device_item(t, d)));
                }
            }
            crate::sort::by_key(&mut launched_elsewhere, &|&(_, d)| {
                (t.slices.start_ns[d], d)
            });
            for (l, d) in launched_elsewhere {
                items.push(item(t, l));
                items.push(device_item(t, d));
            }
            crate::sort::by_key(&mut unlaunched, &|&d| (t.slices.start_ns[d], d));
            items.extend(unlaunched.into_iter().map(|d| device_item(t, d)));
        }
    }
    let more = items.len().saturating_sub(MAX_CHAIN_ITEMS);
    items.truncate(MAX_CHAIN_ITEMS);
    Chain { items, more }
}

/// Device events launched by runtime call `r`, in start order.
fn launched_by(t: &Trace, r: usize) -> impl Iterator<Item = usize> {
    let mut ds: Vec<usize> = (0..t.slices.len())
        .filter(|&d| t.links.launch[d] == r as u32 && t.slices.category[d].is_device())
        .collect();
    crate::sort::by_key(&mut ds, &|&d| (t.slices.start_ns[d], d));
    ds.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{import_bytes, ImportOptions};

    fn trace(json: &str) -> Trace {
        import_bytes(json.as_bytes(), ImportOptions::default()).unwrap()
    }

    fn find(t: &Trace, name: &str) -> usize {
        (0..t.slices.len())
            .find(|&i| t.slice_name(i) == name)
            .unwrap()
    }

    /// An op with a nested op that launches two kernels on one stream; the
    /// second kernel waits for the first.
    const NESTED: &str = r#"{"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},
      {"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":10,"dur":80,"args":{"External id":2}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":10,"args":{"External id":2,"correlation":5}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":40,"dur":10,"args":{"External id":2,"correlation":6}},
      {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":35,"dur":30,"args":{"External id":2,"correlation":5,"stream":7}},
      {"ph":"X","cat":"kernel","name":"bias","pid":0,"tid":7,"ts":70,"dur":5,"args":{"External id":2,"correlation":6,"stream":7}},
      {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":120,"dur":10,"args":{"External id":3}}
    ]}"#;

    #[test]
    fn an_op_lists_the_launches_and_kernels_of_the_ops_nested_in_it() {
        let t = trace(NESTED);
        let chain = dependency_chain(&t, find(&t, "aten::linear"));
        let names: Vec<(&str, Role)> = chain
            .items
            .iter()
            .map(|i| (t.slice_name(i.slice as usize), i.role))
            .collect();
        assert_eq!(
            names,
            [
                ("aten::linear", Role::Op),
                ("cudaLaunchKernel", Role::Runtime),
                ("gemm", Role::Device),
                ("cudaLaunchKernel", Role::Runtime),
                ("bias", Role::Device),
            ]
        );
        assert!(dependency_chain(&t, find(&t, "aten::relu")).items.len() == 1);
    }

    #[test]
    fn launch_delay_splits_into_queueing_behind_earlier_work_and_latency() {
        let t = trace(NESTED);
        // gemm: launched 20–30 µs, starts at 35 on an idle stream.
        let gemm = dependency_chain(&t, find(&t, "gemm"));
        let k = gemm.items.last().unwrap();
        assert_eq!(k.launch_delay_ns, Some(5_000));
        assert_eq!(k.queue_ns, Some(0));
        // bias: launched 40–50 µs, starts at 70; gemm held the stream until 65.
        let bias = dependency_chain(&t, find(&t, "bias"));
        let names: Vec<&str> = bias
            .items
            .iter()
            .map(|i| t.slice_name(i.slice as usize))
            .collect();
        assert_eq!(names, ["aten::addmm", "cudaLaunchKernel", "bias"]);
        let k = bias.items.last().unwrap();
        assert_eq!(k.launch_delay_ns, Some(20_000));
        assert_eq!(k.queue_ns, Some(15_000));
    }
}
