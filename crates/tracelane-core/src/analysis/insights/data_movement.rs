//! Copies: pageable host memory, and layout conversions (copies that only
//! change a tensor's layout or dtype).

use crate::analysis::data_movement::CopyEvent;
use crate::analysis::intervals::Interval;
use crate::model::NO_SLICE;

use super::cx::{pct, tally, us, Cx};
use super::report::{Evidence, Finding};
use super::rules::{LAYOUT_SHARE, MAX_EVIDENCE};

pub(super) fn pageable_copies(cx: &Cx, copies: &[CopyEvent]) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let pageable: Vec<&CopyEvent> = copies.iter().filter(|c| c.memory == "pageable").collect();
    if pageable.is_empty() {
        let pinned = copies.iter().filter(|c| c.memory == "pinned").count();
        return (
            Vec::new(),
            format!("no pageable copies ({pinned} from or to pinned memory)"),
        );
    }
    // The host waits in the copy's runtime call while the driver stages it.
    let mut ranges = Vec::new();
    let mut slices = Vec::new();
    let (mut bytes, mut device_ns, mut host_ns) = (0u64, 0i64, 0i64);
    let mut kinds: Vec<String> = Vec::new();
    for c in &pageable {
        let d = c.slice as usize;
        device_ns += s.dur_ns[d];
        bytes += c.bytes.unwrap_or(0);
        slices.push(c.slice);
        if !kinds.contains(&c.kind) {
            kinds.push(c.kind.clone());
        }
        let l = t.links.launch[d];
        if l != NO_SLICE {
            slices.push(l);
            host_ns += s.dur_ns[l as usize];
            ranges.push((s.start_ns[l as usize], s.end_ns(l as usize)));
        } else {
            ranges.push((s.start_ns[d], s.end_ns(d)));
        }
    }
    let bounded = cx.bounded(host_ns, &ranges);
    let count = pageable.len();
    let mut by_op: Vec<(String, usize)> = Vec::new();
    for c in &pageable {
        let k = if c.cause != NO_SLICE { c.cause } else { c.op };
        let name = if k == NO_SLICE {
            "(no op)".to_string()
        } else {
            t.slice_name(k as usize).to_string()
        };
        tally(&mut by_op, name);
    }
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    ranges.truncate(MAX_EVIDENCE);
    let f = cx.finding(
        "pageable_copy",
        kinds.join("+"),
        format!("{count} {} copies from or to pageable memory", kinds.join(" / ")),
        bounded,
        Evidence {
            numbers: vec![
                ("copies".into(), count.to_string()),
                ("bytes".into(), crate::numbers::fmt_count(bytes)),
                ("device time".into(), us(device_ns)),
                ("host time in their calls".into(), us(host_ns)),
                (
                    "caused by".into(),
                    by_op.iter().map(|(n, k)| format!("{n} ×{k}")).collect::<Vec<_>>().join(", "),
                ),
            ],
            ops: by_op.into_iter().map(|(n, _)| n).collect(),
            slices,
            slice_count,
            ranges,
        },
        "allocate the host tensors in pinned memory (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with .to(device, non_blocking=True), so the copy runs asynchronously and overlaps compute",
    );
    (vec![f], String::new())
}

pub(super) fn layout_conversions(
    cx: &Cx,
    (copies, device_ns): &(Vec<CopyEvent>, i64),
) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let layout: Vec<&CopyEvent> = copies
        .iter()
        .filter(|c| c.kind == "copy kernel" || c.kind == "layout kernel")
        .collect();
    let time: i64 = layout.iter().map(|c| s.dur_ns[c.slice as usize]).sum();
    let share = time as f64 / (*device_ns).max(1) as f64;
    if layout.is_empty() || share < LAYOUT_SHARE {
        return (
            Vec::new(),
            format!(
                "copy and layout kernels {} of device time",
                pct(100.0 * share)
            ),
        );
    }
    let mut by: Vec<(String, usize, i64)> = Vec::new();
    for c in &layout {
        let k = if c.cause != NO_SLICE { c.cause } else { c.op };
        let name = if c.kind == "layout kernel" || k == NO_SLICE {
            let n = t.slice_name(c.slice as usize);
            ["nchwToNhwc", "nhwcToNchw", "transpose", "permute"]
                .into_iter()
                .find(|p| n.contains(p))
                .unwrap_or("copy")
                .to_string()
        } else {
            t.slice_name(k as usize).to_string()
        };
        let d = s.dur_ns[c.slice as usize];
        match by.iter_mut().find(|x| x.0 == name) {
            Some(x) => {
                x.1 += 1;
                x.2 += d;
            }
            None => by.push((name, 1, d)),
        }
    }
    crate::sort::by_key(&mut by, &|x| std::cmp::Reverse(x.2));
    let ranges: Vec<Interval> = layout
        .iter()
        .map(|c| (s.start_ns[c.slice as usize], s.end_ns(c.slice as usize)))
        .collect();
    let bounded = cx.bounded(time, &ranges);
    let mut slices: Vec<u32> = layout.iter().map(|c| c.slice).collect();
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    let f = cx.finding(
        "layout_conversion",
        by.iter().map(|x| x.0.as_str()).collect::<Vec<_>>().join("+"),
        format!(
            "Layout conversions take {} of device time ({} kernels)",
            pct(100.0 * share),
            layout.len()
        ),
        bounded,
        Evidence {
            numbers: vec![
                ("kernels".into(), layout.len().to_string()),
                ("device time".into(), us(time)),
                ("share of device time".into(), pct(100.0 * share)),
                (
                    "by cause".into(),
                    by.iter().map(|(n, k, d)| format!("{n} ×{k} ({})", us(*d))).collect::<Vec<_>>().join(", "),
                ),
            ],
            ops: by.into_iter().map(|x| x.0).collect(),
            slices,
            slice_count,
            ranges: ranges.into_iter().take(MAX_EVIDENCE).collect(),
        },
        "keep one memory layout end to end: convert the model and its inputs once (model.to(memory_format=torch.channels_last) for convolutions), avoid .contiguous() / .permute() / .t() round trips between ops, or let torch.compile pick layouts",
    );
    (vec![f], String::new())
}
