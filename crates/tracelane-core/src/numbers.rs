//! How numbers read to a person: durations (`3.217 µs`), counts with
//! thousands separators, SI prefixes for FLOPs and bytes, percentages of a
//! total. Below the analyses and the exporter, so a finding's numbers and a
//! report's cells are written the same way.

/// `412 ns`, `3.217 µs`, `42.511 ms`, `1.305 s`.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.3} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// `216,092`.
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.34%` of a total; `—` where the total is zero (undefined).
pub fn pct(part: i64, whole: i64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
}

/// A count with SI prefixes (`1.07 G`), for FLOPs and bytes.
pub fn fmt_si(x: f64) -> String {
    let a = x.abs();
    let (v, p) = if a >= 1e15 {
        (x / 1e15, " P")
    } else if a >= 1e12 {
        (x / 1e12, " T")
    } else if a >= 1e9 {
        (x / 1e9, " G")
    } else if a >= 1e6 {
        (x / 1e6, " M")
    } else if a >= 1e3 {
        (x / 1e3, " k")
    } else {
        (x, "")
    };
    if p.is_empty() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}{p}")
    }
}

/// Bytes as PyTorch's table prints them (`profiler_util._format_memory`
/// in PyTorch 2.11: powers of 1024 written `GB`, `MB`, `KB` with two
/// decimals, whole `B` below 1 KB — checked on the torch-memory fixtures'
/// tables).
pub fn fmt_mem(bytes: i64) -> String {
    const KB: f64 = 1024.0;
    let (b, a) = (bytes as f64, bytes.unsigned_abs() as f64);
    if a >= KB * KB * KB {
        format!("{:.2} GB", b / (KB * KB * KB))
    } else if a >= KB * KB {
        format!("{:.2} MB", b / (KB * KB))
    } else if a >= KB {
        format!("{:.2} KB", b / KB)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_well() {
        assert_eq!(fmt_ns(412.0), "412 ns");
        assert_eq!(fmt_ns(3_217.4), "3.217 µs");
        assert_eq!(fmt_ns(42_511_000.0), "42.511 ms");
        assert_eq!(fmt_ns(1_305_161_000.0), "1.305 s");
        assert_eq!(fmt_count(216_092), "216,092");
    }
}
