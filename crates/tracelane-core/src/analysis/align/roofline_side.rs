//! Each side's position on its own roofline: the device work the roofline
//! places — kernels launched alone by an op with a FLOP count (a PyTorch
//! trace), or HLO ops (a device profile) — summed as one point, against
//! the side's own device's roofs where they are known
//! ([`crate::analysis::roofline`]: the same FLOPs, bytes and peaks).

use serde::{Deserialize, Serialize};

use crate::analysis::roofline::{peak_for, place, placed_device_work, Peak, PeakOverride, Point};
use crate::analysis::scope::Scope;
use crate::model::Trace;

/// One side on its roofline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RooflinePosition {
    /// The device the trace names, and its roofs for the point's dtype.
    pub device: Option<String>,
    pub peak: Option<Peak>,
    /// The placed work summed: FLOPs, bytes, time, achieved FLOP/s,
    /// intensity, bound and headroom (`attainable / achieved`).
    pub point: Point,
    /// The placed work's share of the side's device time in the scope.
    pub share_of_device_time: f64,
}

/// Side `t`'s position in `scope` (`None`: nothing placed — no device
/// work with a FLOP count). `device_ns`: its device time in the scope.
pub fn position(t: &Trace, scope: &Scope, device_ns: i64) -> Option<RooflinePosition> {
    // Kernels and HLO ops do not nest; ops (a PyTorch op and the ops
    // under it) do, so only the kernels of a PyTorch trace are summed.
    let (_, device, placed) = placed_device_work(t, scope, PeakOverride::default()).ok()?;
    let placed: Vec<&Point> = placed.iter().filter(|p| p.flops > 0.0).collect();
    let first = *placed.first()?;
    let mut sum = Point {
        name: "placed device work".into(),
        input_shapes: None,
        calls: 0,
        time_ns: 0,
        flops: 0.0,
        bytes: Some(0.0),
        slices: Vec::new(),
        first_ns: None,
        achieved_flops_per_s: None,
        intensity: None,
        bound: None,
        headroom: None,
        ..first.clone()
    };
    // The dtype that carries most of the FLOPs names the roofs.
    let mut by_dtype: Vec<(Option<String>, f64)> = Vec::new();
    for p in &placed {
        sum.calls += p.calls;
        sum.time_ns += p.time_ns;
        sum.flops += p.flops;
        sum.bytes = sum.bytes.zip(p.bytes).map(|(a, b)| a + b);
        match by_dtype.iter_mut().find(|(d, _)| *d == p.dtype) {
            Some((_, f)) => *f += p.flops,
            None => by_dtype.push((p.dtype.clone(), p.flops)),
        }
    }
    sum.dtype = by_dtype
        .into_iter()
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .and_then(|x| x.0);
    let peak = peak_for(
        device.as_deref(),
        PeakOverride::default(),
        sum.dtype.as_deref(),
    );
    place(&mut sum, peak.as_ref());
    Some(RooflinePosition {
        device,
        peak,
        share_of_device_time: if device_ns > 0 {
            sum.time_ns as f64 / device_ns as f64
        } else {
            0.0
        },
        point: sum,
    })
}
