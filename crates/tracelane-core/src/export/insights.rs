//! Findings as JSON, sections and a pull-request comment; the CI gate's
//! verdict as sections.

use super::section::Section;
use crate::numbers::fmt_count;

/// The insights report as JSON: `{"scope", "key": {…}, "findings": [{"rule",
/// "title", "severity", "gain_us", "gain_basis", "condition", "evidence":
/// {"numbers": {name: value}, "ops", "slices", "slice_count", "ranges_us"},
/// "action", "key", "bytes"}], "memory": [the memory findings, alike],
/// "checks": [{"rule", "name", "fired", "why"}], "notes"}`, findings in
/// rank order (memory findings by bytes, `bytes` null elsewhere). Times
/// in µs on the trace's clock.
pub fn insights_json(r: &crate::analysis::insights::InsightsReport) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1e3;
    let k = &r.key;
    json!({
        "scope": r.scope,
        "key": {
            "wall_us": us(k.wall_ns),
            "steps": k.steps,
            "step_median_us": k.step_median_ns.map(us),
            "warmup_steps": k.warmup_steps,
            "device_us": us(k.device_ns),
            "device_busy_pct": k.device_busy_pct,
            "launches": k.launches,
            "critical_path_us": k.critical_path_ns.map(us),
            "critical_path_split_us": k.critical_path_split.iter().map(|(b, ns)| (b.clone(), json!(us(*ns)))).collect::<serde_json::Map<_, _>>(),
            "mfu_pct": k.mfu_pct,
            "hfu_pct": k.hfu_pct,
            "mbu_pct": k.mbu_pct,
        },
        "findings": r.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "memory": r.memory.iter().map(finding_json).collect::<Vec<_>>(),
        "checks": r.checks.iter().map(|c| json!({"rule": c.rule, "name": c.name, "fired": c.fired, "why": c.why})).collect::<Vec<_>>(),
        "notes": r.notes,
    })
}

/// One finding as JSON (the insights' and the ranks' findings alike).
pub fn finding_json(f: &crate::analysis::insights::Finding) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1e3;
    json!({
        "rule": f.rule,
        "title": f.title,
        "severity": f.severity.as_str(),
        "gain_us": us(f.gain_ns),
        "gain_basis": f.gain_basis,
        "condition": f.condition,
        "evidence": {
            "numbers": f.evidence.numbers.iter().map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "ops": f.evidence.ops,
            "slices": f.evidence.slices,
            "slice_count": f.evidence.slice_count,
            "ranges_us": f.evidence.ranges.iter().map(|&(a, b)| [us(a), us(b)]).collect::<Vec<_>>(),
        },
        "action": f.action,
        "key": f.key,
        "bytes": f.bytes,
    })
}

/// The key numbers in one line: step, device busy, launches, critical path.
pub fn insights_headline(k: &crate::analysis::insights::KeyNumbers) -> String {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut parts = Vec::new();
    match k.step_median_ns {
        Some(m) => parts.push(format!(
            "step {} median of {} steps{}",
            us(m),
            k.steps,
            if k.warmup_steps > 0 {
                format!(" ({} warm-up left out)", k.warmup_steps)
            } else {
                String::new()
            }
        )),
        None => parts.push(format!("wall {}", us(k.wall_ns))),
    }
    if k.device_ns > 0 {
        parts.push(format!("device time {}", us(k.device_ns)));
    }
    if let Some(b) = k.device_busy_pct {
        parts.push(format!("device busy {b:.1} %"));
    }
    if k.launches > 0 {
        parts.push(format!("{} launches", fmt_count(k.launches)));
    }
    if let Some(c) = k.critical_path_ns {
        let split: Vec<String> = k
            .critical_path_split
            .iter()
            .map(|(b, ns)| format!("{b} {:.0} %", 100.0 * *ns as f64 / c.max(1) as f64))
            .collect();
        parts.push(format!("critical path {} ({})", us(c), split.join(", ")));
    }
    if let (Some(m), Some(b)) = (k.mfu_pct, k.mbu_pct) {
        parts.push(format!("MFU {m:.1} %, MBU {b:.1} %"));
    }
    parts.join(" · ")
}

/// Every finding with its number in the report: `1`, `2`… by gain, then
/// `M1`, `M2`… the memory findings by bytes.
fn numbered(
    r: &crate::analysis::insights::InsightsReport,
) -> impl Iterator<Item = (String, &crate::analysis::insights::Finding)> {
    let time = r
        .findings
        .iter()
        .enumerate()
        .map(|(k, f)| ((k + 1).to_string(), f));
    let memory = r
        .memory
        .iter()
        .enumerate()
        .map(|(k, f)| (format!("M{}", k + 1), f));
    time.chain(memory)
}

/// The insights report as text sections: key numbers, the findings ranked,
/// each finding's evidence and action, and every rule's verdict.
pub fn insights_sections(r: &crate::analysis::insights::InsightsReport) -> Vec<Section> {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut out = Vec::new();
    let mut key = Section::new("Insights", &[(&format!("scope: {}", r.scope), false)]);
    key.rows.push(vec![insights_headline(&r.key)]);
    for n in &r.notes {
        key.rows.push(vec![n.clone()]);
    }
    out.push(key);
    let mut list = Section::new(
        "Findings, largest estimated gain first",
        &[
            ("#", true),
            ("severity", false),
            ("gain", true),
            ("finding", false),
        ],
    );
    for (k, f) in r.findings.iter().enumerate() {
        list.rows.push(vec![
            (k + 1).to_string(),
            f.severity.as_str().into(),
            us(f.gain_ns),
            f.title.clone(),
        ]);
    }
    out.push(list);
    if !r.memory.is_empty() {
        let mut mem = Section::new(
            "Memory findings, most bytes first",
            &[
                ("#", true),
                ("severity", false),
                ("bytes", true),
                ("finding", false),
            ],
        );
        for (k, f) in r.memory.iter().enumerate() {
            mem.rows.push(vec![
                format!("M{}", k + 1),
                f.severity.as_str().into(),
                crate::numbers::fmt_mem(f.bytes.unwrap_or(0)),
                f.title.clone(),
            ]);
        }
        out.push(mem);
    }
    let numbered = numbered(r);
    for (k, f) in numbered {
        let mut s = Section::new(
            &format!("{k}. {}", f.title),
            &[(&format!("rule: {} — {}", f.rule, f.condition), false)],
        );
        for (n, v) in &f.evidence.numbers {
            s.rows.push(vec![format!("{n}: {v}")]);
        }
        if !f.evidence.ops.is_empty() {
            s.rows
                .push(vec![format!("ops: {}", f.evidence.ops.join(", "))]);
        }
        if let Some(b) = f.bytes {
            s.rows
                .push(vec![format!("bytes: {}", crate::numbers::fmt_mem(b))]);
        }
        s.rows
            .push(vec![format!("gain: {} — {}", us(f.gain_ns), f.gain_basis)]);
        s.rows.push(vec![format!("action: {}", f.action)]);
        out.push(s);
    }
    let mut checks = Section::new("Rules checked", &[("rule: findings, or why none", false)]);
    for c in &r.checks {
        checks.rows.push(vec![if c.fired > 0 {
            format!("{}: {}", c.rule, c.fired)
        } else {
            format!("{}: — {}", c.rule, c.why)
        }]);
    }
    out.push(checks);
    out
}

/// The insights report as Markdown made for a pull-request comment: the
/// key numbers, a ranked table, and each finding's evidence folded.
pub fn insights_markdown(r: &crate::analysis::insights::InsightsReport, file: &str) -> String {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "### tracelane insights — `{}` ({})\n\n{}\n\n",
        cell(file),
        cell(&r.scope),
        insights_headline(&r.key)
    );
    for n in &r.notes {
        out.push_str(&format!("> {}\n\n", cell(n)));
    }
    if r.findings.is_empty() && r.memory.is_empty() {
        out.push_str("No findings: every rule checked, none fired.\n\n");
    } else if !r.findings.is_empty() {
        out.push_str("| # | finding | severity | est. gain | action |\n|---:|---|---|---:|---|\n");
        for (k, f) in r.findings.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                k + 1,
                cell(&f.title),
                f.severity.as_str(),
                us(f.gain_ns),
                cell(&f.action)
            ));
        }
        out.push('\n');
    }
    if !r.memory.is_empty() {
        out.push_str(
            "| # | memory finding | severity | bytes | action |\n|---:|---|---|---:|---|\n",
        );
        for (k, f) in r.memory.iter().enumerate() {
            out.push_str(&format!(
                "| M{} | {} | {} | {} | {} |\n",
                k + 1,
                cell(&f.title),
                f.severity.as_str(),
                crate::numbers::fmt_mem(f.bytes.unwrap_or(0)),
                cell(&f.action)
            ));
        }
        out.push('\n');
    }
    {
        let numbered = numbered(r);
        for (k, f) in numbered {
            out.push_str(&format!(
                "<details><summary>{k}. {}</summary>\n\n",
                cell(&f.title)
            ));
            if let Some(b) = f.bytes {
                out.push_str(&format!("- bytes: {}\n", crate::numbers::fmt_mem(b)));
            }
            for (n, v) in &f.evidence.numbers {
                out.push_str(&format!("- {}: {}\n", cell(n), cell(v)));
            }
            if !f.evidence.ops.is_empty() {
                out.push_str(&format!("- ops: `{}`\n", f.evidence.ops.join("`, `")));
            }
            out.push_str(&format!(
                "- gain: {} — {}\n- rule `{}`: {}\n\n</details>\n\n",
                us(f.gain_ns),
                cell(&f.gain_basis),
                f.rule,
                cell(&f.condition)
            ));
        }
    }
    out
}

/// A gate metric's value for people: µs for times, a count otherwise.
fn gate_value(m: &crate::analysis::gate::GateMetric, x: f64) -> String {
    if m.unit == "ns" {
        crate::analysis::compare::fmt_us(x)
    } else {
        format!("{x:.1}")
    }
}

/// The gate's report as text sections: verdict, metrics, what got slower
/// and faster, regions, new findings.
pub fn gate_sections(r: &crate::analysis::gate::GateReport, top: usize) -> Vec<Section> {
    let us = |ns: f64| crate::analysis::compare::fmt_us(ns);
    let mut out = Vec::new();
    let mut head = Section::new("Gate", &[(&r.unit, false)]);
    head.rows.push(vec![r.summary.clone()]);
    if !r.resolved_findings.is_empty() {
        head.rows.push(vec![format!(
            "findings gone: {}",
            r.resolved_findings.join("; ")
        )]);
    }
    out.push(head);
    let mut m = Section::new(
        "Metrics",
        &[
            ("metric", false),
            ("baseline", true),
            ("candidate", true),
            ("change", true),
            ("gated", false),
        ],
    );
    for x in &r.metrics {
        m.rows.push(vec![
            x.name.clone(),
            gate_value(x, x.baseline),
            gate_value(x, x.candidate),
            x.change_pct.map_or("—".into(), |p| format!("{p:+.1} %")),
            match (x.gated, x.regressed) {
                (true, true) => "REGRESSED",
                (true, false) => "yes",
                _ => "no",
            }
            .into(),
        ]);
    }
    out.push(m);
    let deltas = |title: &str, rows: &[crate::analysis::gate::Delta]| {
        let mut s = Section::new(
            title,
            &[
                ("kind", false),
                ("name", false),
                ("status", false),
                ("calls", true),
                ("baseline", true),
                ("candidate", true),
                ("change", true),
            ],
        );
        for d in rows.iter().take(top) {
            s.rows.push(vec![
                d.kind.clone(),
                d.name.clone(),
                d.status.clone(),
                format!("{:.1} → {:.1}", d.baseline_count, d.candidate_count),
                us(d.baseline_ns),
                us(d.candidate_ns),
                us(d.candidate_ns - d.baseline_ns),
            ]);
        }
        s
    };
    out.push(deltas("Slower (ops and device events)", &r.slower));
    out.push(deltas("Faster (ops and device events)", &r.faster));
    let changed: Vec<crate::analysis::gate::Delta> = r
        .regions
        .iter()
        .filter(|d| d.status != "same")
        .cloned()
        .collect();
    out.push(deltas("Regions (median occurrence)", &changed));
    let mut f = Section::new(
        "New findings",
        &[("severity", false), ("gain", true), ("finding", false)],
    );
    for x in &r.new_findings {
        f.rows.push(vec![
            x.severity.as_str().into(),
            us(x.gain_ns as f64),
            x.title.clone(),
        ]);
    }
    out.push(f);
    out
}
