//! A distributed run as JSON and sections: steps per rank, stragglers,
//! collectives matched across ranks.

use super::insights::finding_json;
use super::section::Section;
use crate::numbers::{fmt_ns, fmt_si, pct};

/// The ranks report in the JSON shape `tracelane ranks --format json`
/// prints and the page downloads: µs, each rank's steps, stragglers and
/// the collectives by skew (`top` of them; all with `None`).
pub fn ranks_json(
    r: &crate::analysis::ranks::RanksReport,
    top: Option<usize>,
) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1000.0;
    let ranks: Vec<_> = r
        .ranks
        .iter()
        .map(|row| {
            json!({
                "rank": row.rank,
                "source": row.source,
                "basis": row.basis,
                "clock_offset_ns": row.clock_offset_ns,
                "start_offset_us": us(row.start_offset_ns),
                "steps": row.steps.iter().zip(&row.wait_ns).map(|(s, w)| json!({
                    "step": s.step,
                    "wall_us": us(s.wall_ns),
                    "compute_us": us(s.compute_ns),
                    "exposed_comm_us": us(s.exposed_comm_ns),
                    "exposed_memcpy_us": us(s.exposed_memcpy_ns),
                    "exposed_other_us": us(s.exposed_other_ns),
                    "idle_us": us(s.idle_ns),
                    "comm_us": us(s.comm_ns),
                    "collective_wait_us": us(*w),
                })).collect::<Vec<_>>(),
                "comm_comp_overlap_pct": row.comm_comp_overlap_pct,
                "hta": row.hta,
            })
        })
        .collect();
    let n = top.unwrap_or(usize::MAX);
    let collectives: Vec<_> = r
        .collectives
        .iter()
        .take(n)
        .map(|c| {
            json!({
                "name": c.name,
                "group": c.group,
                "seq": c.seq,
                "step": c.step,
                "bytes": c.bytes,
                "ranks": c.ranks,
                "skew_us": us(c.skew_ns),
                "last_rank": c.last_rank,
                "first_rank": c.first_rank,
                "transfer_us": c.transfer_ns.map(us),
                "algbw_gbps": c.algbw_gbps,
                "busbw_gbps": c.busbw_gbps,
            })
        })
        .collect();
    json!({
        "rank_source": r.rank_source,
        "steps": r.steps,
        "ranks": ranks,
        "stragglers": r.stragglers.iter().map(|s| json!({
            "step": s.step,
            "rank": s.rank,
            "by": s.by,
            "blame_us": us(s.blame_ns),
            "others_waited_us": us(s.others_waited_ns),
            "wall_max_us": us(s.wall_max_ns),
            "wall_min_us": us(s.wall_min_ns),
            "collectives": s.collectives,
        })).collect::<Vec<_>>(),
        "collectives": collectives,
        "findings": crate::analysis::insights::ranks_findings(r).0.iter().map(finding_json).collect::<Vec<_>>(),
        "collectives_matched": r.collectives.len(),
        "mismatched": r.mismatched,
        "unmatched_calls": r.unmatched_calls,
        "unmatched_by_kind": r.unmatched_by_kind,
        "notes": r.notes,
    })
}

/// The ranks report as sections: notes, stragglers per step, each rank's
/// mean step breakdown, rank × step wall times, the `top` collectives by
/// skew.
pub fn ranks_sections(r: &crate::analysis::ranks::RanksReport, top: usize) -> Vec<Section> {
    let f = |ns: i64| fmt_ns(ns as f64);
    let mut notes = Section::new("Ranks", &[("note", false)]);
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    notes.rows.push(vec![format!(
        "{}, {}; {}",
        plural(r.ranks.len(), "rank"),
        plural(r.steps.len(), "step"),
        r.rank_source.describe()
    )]);
    for n in &r.notes {
        notes.rows.push(vec![n.clone()]);
    }
    let (findings, why) = crate::analysis::insights::ranks_findings(r);
    match findings.is_empty() {
        true => notes.rows.push(vec![format!("straggler rank: — {why}")]),
        false => {
            for f in &findings {
                notes.rows.push(vec![format!("{} — {}", f.title, f.action)]);
            }
        }
    }
    let mut strag = Section::new(
        "Stragglers per step",
        &[
            ("step", true),
            ("straggler", true),
            ("by", false),
            ("last at (skew)", true),
            ("others waited", true),
            ("wall min", true),
            ("wall max", true),
            ("collectives", true),
        ],
    );
    for s in &r.stragglers {
        strag.rows.push(vec![
            s.step.to_string(),
            s.rank.to_string(),
            s.by.clone(),
            f(s.blame_ns),
            f(s.others_waited_ns),
            f(s.wall_min_ns),
            f(s.wall_max_ns),
            s.collectives.to_string(),
        ]);
    }
    let mut per_rank = Section::new(
        "Per rank (sum over steps)",
        &[
            ("rank", true),
            ("basis", false),
            ("wall", true),
            ("compute", true),
            ("exposed comm", true),
            ("exposed memcpy", true),
            ("other", true),
            ("idle", true),
            ("waited in collectives", true),
            ("comm/comp overlap", true),
            ("clock offset", true),
        ],
    );
    for row in &r.ranks {
        let sum =
            |g: fn(&crate::analysis::ranks::StepTimes) -> i64| row.steps.iter().map(g).sum::<i64>();
        let wall = sum(|s| s.wall_ns);
        per_rank.rows.push(vec![
            row.rank.to_string(),
            format!("{:?}", row.basis).to_lowercase(),
            f(wall),
            format!(
                "{} ({})",
                f(sum(|s| s.compute_ns)),
                pct(sum(|s| s.compute_ns), wall)
            ),
            format!(
                "{} ({})",
                f(sum(|s| s.exposed_comm_ns)),
                pct(sum(|s| s.exposed_comm_ns), wall)
            ),
            format!(
                "{} ({})",
                f(sum(|s| s.exposed_memcpy_ns)),
                pct(sum(|s| s.exposed_memcpy_ns), wall)
            ),
            f(sum(|s| s.exposed_other_ns)),
            format!(
                "{} ({})",
                f(sum(|s| s.idle_ns)),
                pct(sum(|s| s.idle_ns), wall)
            ),
            f(row.wait_ns.iter().sum()),
            row.comm_comp_overlap_pct
                .map_or("—".into(), |p| format!("{p:.1}%")),
            format!("{} ns", row.clock_offset_ns),
        ]);
    }
    let mut header: Vec<(String, bool)> = vec![("rank".into(), true)];
    header.extend(r.steps.iter().map(|s| (format!("step {s}"), true)));
    let mut grid = Section {
        title: "Step wall time per rank".into(),
        header: header.iter().map(|h| h.0.clone()).collect(),
        numeric: header.iter().map(|h| h.1).collect(),
        rows: Vec::new(),
    };
    for row in &r.ranks {
        let mut cells = vec![row.rank.to_string()];
        for s in &r.steps {
            cells.push(
                row.steps
                    .iter()
                    .find(|x| x.step == *s)
                    .map_or("—".into(), |x| f(x.wall_ns)),
            );
        }
        grid.rows.push(cells);
    }
    let mut coll = Section::new(
        &format!("Collectives by skew ({} matched)", r.collectives.len()),
        &[
            ("collective", false),
            ("group", false),
            ("seq", true),
            ("step", true),
            ("bytes", true),
            ("skew", true),
            ("last rank", true),
            ("transfer", true),
            ("bus bw", true),
        ],
    );
    for c in r.collectives.iter().take(top) {
        coll.rows.push(vec![
            c.name.clone(),
            c.group.clone(),
            c.seq.to_string(),
            c.step.map_or("—".into(), |s| s.to_string()),
            c.bytes
                .map_or("—".into(), |b| format!("{}B", fmt_si(b as f64))),
            f(c.skew_ns),
            c.last_rank.to_string(),
            c.transfer_ns.map_or("—".into(), f),
            c.busbw_gbps.map_or("—".into(), |b| format!("{b:.1} GB/s")),
        ]);
    }
    vec![notes, strag, per_rank, grid, coll]
}
