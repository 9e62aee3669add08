use super::*;
use crate::{import_bytes, ImportOptions};

/// An eager region with two ops (two kernels) and a fused one (one
/// kernel), twice each, on a CUDA-shaped trace.
fn pair() -> Trace {
    let mut ev = Vec::new();
    let mut ext = 0;
    let mut t = 0.0f64;
    for rep in 0..2 {
        for (region, ops) in [
            ("eager", vec![("aten::pow", 30.0), ("aten::mul", 20.0)]),
            ("fused", vec![("aten::rms_norm", 10.0)]),
        ] {
            let start = t;
            t += 1.0;
            for (op, kdur) in &ops {
                ext += 1;
                ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"{op}","pid":1,"tid":1,"ts":{t},"dur":8,"args":{{"External id":{ext}}}}}"#));
                ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":4,"args":{{"External id":{ext},"correlation":{ext}}}}}"#, t + 2.0));
                ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"k_{op}","pid":0,"tid":7,"ts":{},"dur":{kdur},"args":{{"External id":{ext},"correlation":{ext}}}}}"#, 1000.0 + t * 5.0 + rep as f64 * 500.0));
                t += 10.0;
            }
            ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"{region}","pid":1,"tid":1,"ts":{start},"dur":{}}}"#, t - start));
            t += 5.0;
        }
    }
    import_bytes(
        format!(r#"{{"traceEvents":[{}]}}"#, ev.join(",")).as_bytes(),
        ImportOptions::default(),
    )
    .unwrap()
}

#[test]
fn a_region_counts_its_ops_launches_and_the_kernels_they_caused() {
    let t = pair();
    let eager = measure(&t, &Scope::named("eager"), "eager", "f").unwrap();
    assert_eq!(eager.occurrences, 2);
    assert_eq!(eager.wall_ns, [21_000, 21_000]);
    assert_eq!(
        (eager.cpu_ops, eager.launches, eager.device_events),
        (4, 4, 4)
    );
    assert_eq!(eager.device_ns, 2 * 50_000);
    assert_eq!(eager.device_busy_ns, 2 * 50_000);
    assert_eq!(eager.cpu_self_ns, 4 * 8_000);
    let names: Vec<(&str, Vec<&str>)> = eager
        .map
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.device.iter().map(|d| d.name.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("aten::pow", vec!["k_aten::pow"]),
            ("aten::mul", vec!["k_aten::mul"])
        ]
    );
    let fused = measure(&t, &Scope::named("fused"), "fused", "f").unwrap();
    assert_eq!(
        (fused.cpu_ops, fused.device_events, fused.device_ns),
        (2, 2, 20_000)
    );
    assert_eq!(
        headline(&eager, &fused),
        "device time 50.0 µs → 10.0 µs (5.0× less); 2 device events → 1; 2 CPU ops → 1"
    );
    let d = diff(&eager, &fused);
    let status: Vec<(&str, &str)> = d
        .iter()
        .map(|r| (r.name.as_str(), r.status.as_str()))
        .collect();
    assert!(status.contains(&("k_aten::pow", "removed")));
    assert!(status.contains(&("aten::rms_norm", "added")));
    assert_eq!(ratio(&eager, 4.0, &fused, 2.0), Some(0.5));
}

#[test]
fn an_unknown_region_names_the_ones_there_are() {
    let t = pair();
    let err = measure(&t, &Scope::named("nope"), "x", "f").unwrap_err();
    assert!(err.0.contains("eager (2×)"), "{err}");
}

#[test]
fn device_idle_is_the_region_span_less_busy_time() {
    let t = pair();
    let eager = measure(&t, &Scope::named("eager"), "eager", "f").unwrap();
    // Each occurrence: starts at its CPU start, ends with its last kernel.
    let whole = measure(&t, &Scope::Whole, "all", "f").unwrap();
    assert_eq!(whole.device_events, 6);
    assert!(eager.device_idle_ns > 0);
    assert_eq!(intervals::union_len(&mut [(0, 10), (5, 20), (30, 40)]), 30);
}
