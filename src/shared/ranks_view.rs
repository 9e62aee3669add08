//! The Ranks view's presentation of a [`RanksReport`]: stragglers, a rank
//! × step heat map per measure, each rank's steps as a stacked bar, the
//! collectives by skew — built in the ranks worker, rendered by the page's
//! generic report renderer.

use tracelane_core::analysis::ranks::{Collective, RanksReport, StepTimes};

use crate::shared::report_view::{BarPart, ReportView, ViewCell, ViewRow, ViewTable};
use crate::shared::table;

/// Collectives listed in the view (all are in the JSON download).
pub const COLLECTIVES_SHOWN: usize = 50;

/// Ranks a collective's timeline stacks at most: each is a whole model in
/// the page's worker.
pub const STACKED_RANKS: usize = 8;

/// The ranks of a collective its timeline shows (positions in
/// `c.calls`, in rank order): all of them up to [`STACKED_RANKS`], else
/// the last and the first to arrive and ranks spread evenly between by
/// arrival.
pub fn stacked_calls(c: &Collective) -> Vec<usize> {
    let n = c.calls.len();
    if n <= STACKED_RANKS {
        return (0..n).collect();
    }
    let mut by_arrival: Vec<usize> = (0..n).collect();
    tracelane_core::sort::by_key(&mut by_arrival, &|&k| (c.calls[k].1, c.calls[k].0));
    let mut out: Vec<usize> = (0..STACKED_RANKS)
        .map(|j| by_arrival[j * (n - 1) / (STACKED_RANKS - 1)])
        .collect();
    tracelane_core::sort::by_key(&mut out, &|&k| c.calls[k].0);
    out.dedup();
    out
}

/// What a collective's row carries for its timeline: the report inputs
/// (rank files) to stack, their ranks, the window (epoch ns: first
/// arrival → last end) and the clock the stack is shown on (the earliest
/// of those ranks' clock offsets).
fn stack_data(r: &RanksReport, c: &Collective) -> Vec<(String, String)> {
    let calls = stacked_calls(c);
    let rows: Vec<_> = calls
        .iter()
        .filter_map(|&k| r.ranks.iter().find(|row| row.rank == c.calls[k].0))
        .collect();
    let list = |v: Vec<String>| v.join(",");
    let from = calls.iter().map(|&k| c.calls[k].1).min().unwrap_or(0);
    let to = calls.iter().map(|&k| c.calls[k].2).max().unwrap_or(0);
    let base = rows
        .iter()
        .map(|row| row.clock_offset_ns)
        .min()
        .unwrap_or(0);
    vec![
        (
            "inputs".into(),
            list(rows.iter().map(|row| row.input.to_string()).collect()),
        ),
        (
            "ranks".into(),
            list(rows.iter().map(|row| row.rank.to_string()).collect()),
        ),
        ("from-ns".into(), from.to_string()),
        ("to-ns".into(), to.to_string()),
        ("base-ns".into(), base.to_string()),
    ]
}

fn fmt(ns: i64) -> String {
    table::fmt_ns(ns as f64)
}

fn num(text: String) -> ViewCell {
    ViewCell {
        text,
        class: "num".into(),
        ..ViewCell::default()
    }
}

/// The heat map's measures: (table id, label, value of a step).
type Measure = (&'static str, &'static str, fn(&StepTimes, i64) -> i64);

const MEASURES: [Measure; 4] = [
    ("heat-map", "step time", |s, _| s.wall_ns),
    ("heat-map-compute", "compute", |s, _| s.compute_ns),
    ("heat-map-exposed-comm", "exposed communication", |s, _| {
        s.exposed_comm_ns
    }),
    ("heat-map-waited", "waited in collectives", |_, w| w),
];

/// The whole view.
pub fn ranks_view(r: &RanksReport) -> ReportView {
    let mut notes = vec![format!(
        "{}; {} steps; {} collectives matched across ranks.",
        r.rank_source.describe(),
        r.steps.len(),
        r.collectives.len()
    )];
    notes.extend(r.notes.iter().cloned());
    let mut tables = vec![findings(r), straggler_ranks(r), stragglers(r)];
    tables.extend(MEASURES.iter().map(|m| heat_map(r, m)));
    tables.push(rank_bars(r));
    tables.push(collectives(r));
    ReportView { notes, tables }
}

/// Steps listed one by one at most (all are in the JSON download).
pub const STEPS_SHOWN: usize = 200;

/// The run's findings (the insights' `straggler_rank` rule), as
/// `tracelane ranks` prints them.
fn findings(r: &RanksReport) -> ViewTable {
    let (found, why) = tracelane_core::analysis::insights::ranks_findings(r);
    let mut t = ViewTable::new(
        "rank-findings",
        "Findings",
        &[
            ("finding", false),
            ("severity", false),
            ("others waited", true),
            ("what to change", false),
        ],
    );
    for f in &found {
        t.rows.push(
            ViewRow::of(vec![
                ViewCell {
                    class: "strong".into(),
                    title: f.gain_basis.clone(),
                    ..ViewCell::text(f.title.clone())
                },
                ViewCell::text(f.severity.as_str().to_string()),
                num(fmt(f.gain_ns)),
                ViewCell::text(f.action.clone()),
            ])
            .data("rule", &f.rule)
            .data("key", &f.key)
            .data("gain-ns", f.gain_ns),
        );
    }
    t.note = if found.is_empty() {
        format!("No straggler rank: {why}.")
    } else {
        tracelane_core::analysis::insights::RULES
            .iter()
            .find(|x| x.id == "straggler_rank")
            .map(|x| format!("Rule: {}", x.condition))
            .unwrap_or_default()
    };
    t
}

/// Who the stragglers were, over the run.
fn straggler_ranks(r: &RanksReport) -> ViewTable {
    let mut by: std::collections::BTreeMap<i64, (usize, i64)> = Default::default();
    for s in &r.stragglers {
        let e = by.entry(s.rank).or_default();
        e.0 += 1;
        e.1 += s.others_waited_ns;
    }
    let mut rows: Vec<(i64, usize, i64)> = by.into_iter().map(|(k, (n, w))| (k, n, w)).collect();
    tracelane_core::sort::by(&mut rows, &|a, b| {
        b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0))
    });
    let mut t = ViewTable::new(
        "straggler-ranks",
        "Stragglers",
        &[
            ("rank", true),
            ("straggler of", true),
            ("others waited for it", true),
        ],
    );
    for (rank, n, waited) in rows {
        t.rows.push(
            ViewRow::of(vec![
                ViewCell {
                    class: "num strong".into(),
                    ..ViewCell::text(format!("rank {rank}"))
                },
                num(format!("{n} of {} steps", r.stragglers.len())),
                num(fmt(waited)),
            ])
            .data("rank", rank)
            .data("steps", n),
        );
    }
    t
}

fn stragglers(r: &RanksReport) -> ViewTable {
    let mut t = ViewTable::new(
        "stragglers",
        "Each step's straggler",
        &[
            ("step", true),
            ("straggler", true),
            ("by", false),
            ("skew it caused", true),
            ("others waited", true),
            ("step time (min – max)", true),
        ],
    );
    for s in r.stragglers.iter().take(STEPS_SHOWN) {
        t.rows.push(
            ViewRow::of(vec![
                num(s.step.to_string()),
                ViewCell {
                    class: "num strong".into(),
                    ..ViewCell::text(format!("rank {}", s.rank))
                },
                if s.by == "collectives" {
                    format!("last at {} collectives", s.collectives).into()
                } else {
                    "longest step (no matched collectives)".into()
                },
                num(fmt(s.blame_ns)),
                num(fmt(s.others_waited_ns)),
                num(format!("{} – {}", fmt(s.wall_min_ns), fmt(s.wall_max_ns))),
            ])
            .data("step", s.step)
            .data("rank", s.rank)
            .data("blame-ns", s.blame_ns),
        );
    }
    t.note = "The straggler of a step arrived last at its collectives by the most time (the sum of the skews it caused); the others waited for it inside theirs.".into();
    if r.stragglers.len() > STEPS_SHOWN {
        t.note.push_str(&format!(
            " The first {STEPS_SHOWN} steps of {}; all in the JSON download.",
            r.stragglers.len()
        ));
    }
    t
}

/// Columns of the heat map at most: beyond, consecutive steps share a
/// column (their mean), so a run of a thousand steps stays one screen.
pub const HEAT_COLUMNS: usize = 60;

fn heat_map(r: &RanksReport, &(id, label, value): &Measure) -> ViewTable {
    use std::collections::HashMap;
    let per = r.steps.len().div_ceil(HEAT_COLUMNS).max(1);
    let bins: Vec<&[u64]> = r.steps.chunks(per).collect();
    let straggler: HashMap<u64, i64> = r.stragglers.iter().map(|g| (g.step, g.rank)).collect();
    // Per rank: step → value.
    let values: Vec<HashMap<u64, i64>> = r
        .ranks
        .iter()
        .map(|row| {
            row.steps
                .iter()
                .enumerate()
                .map(|(k, st)| (st.step, value(st, row.wait_ns.get(k).copied().unwrap_or(0))))
                .collect()
        })
        .collect();
    // Per rank and column: the mean over the column's steps, and in how
    // many of them the rank was the straggler.
    let cell = |k: usize, bin: &[u64]| -> Option<(i64, usize)> {
        let vs: Vec<i64> = bin
            .iter()
            .filter_map(|s| values[k].get(s).copied())
            .collect();
        if vs.is_empty() {
            return None;
        }
        let rank = r.ranks[k].rank;
        let led = bin
            .iter()
            .filter(|s| straggler.get(s) == Some(&rank))
            .count();
        Some((vs.iter().sum::<i64>() / vs.len() as i64, led))
    };
    let max = (0..r.ranks.len())
        .flat_map(|k| bins.iter().filter_map(move |b| cell(k, b)))
        .map(|c| c.0)
        .max()
        .unwrap_or(0)
        .max(1);
    let span = |bin: &[u64]| match bin {
        [one] => format!("step {one}"),
        [first, .., last] => format!("steps {first}–{last}"),
        [] => String::new(),
    };
    let mut head = vec![("rank".to_string(), true)];
    head.extend(bins.iter().map(|b| (span(b), true)));
    let mut t = ViewTable {
        id: id.into(),
        title: String::new(),
        group: "heat".into(),
        choice: label.into(),
        class: "heat".into(),
        head: head.iter().map(|h| h.0.clone()).collect(),
        numeric: head.iter().map(|h| h.1).collect(),
        ..ViewTable::default()
    };
    for (k, row) in r.ranks.iter().enumerate() {
        let mut cells = vec![ViewCell {
            class: "rowhead".into(),
            title: row.source.clone(),
            ..ViewCell::text(row.rank.to_string())
        }];
        for bin in &bins {
            cells.push(match cell(k, bin) {
                None => ViewCell {
                    class: "empty".into(),
                    ..ViewCell::text("—")
                },
                Some((v, led)) => {
                    let x = v as f64 / max as f64;
                    // The straggler of the step, or of most of the column's.
                    let outlined = 2 * led > bin.len() || (led > 0 && bin.len() == 1);
                    let mean = if bin.len() > 1 { " (mean)" } else { "" };
                    ViewCell {
                        text: fmt(v),
                        class: if outlined { "num straggler" } else { "num" }.into(),
                        style: heat_style(x),
                        title: format!("rank {} {}: {label}{mean} {}", row.rank, span(bin), fmt(v)),
                        data: vec![
                            ("rank".into(), row.rank.to_string()),
                            ("step".into(), bin[0].to_string()),
                            ("steps".into(), bin.len().to_string()),
                            ("ns".into(), v.to_string()),
                        ],
                        bar: Vec::new(),
                    }
                }
            });
        }
        t.rows.push(ViewRow::of(cells).data("rank", row.rank));
    }
    t.note = if per > 1 {
        format!("{} steps, {per} to a column (their mean). Outlined: the straggler of most of a column's steps. In a synchronous run every rank's step takes about as long (the others wait for the slowest inside their collectives): compute and the time waited in collectives show who is slow.", r.steps.len())
    } else {
        "Outlined: the step's straggler. In a synchronous run every rank's step takes about as long (the others wait for the slowest inside their collectives): compute and the time waited in collectives show who is slow.".into()
    };
    t
}

fn rank_bars(r: &RanksReport) -> ViewTable {
    let mut t = ViewTable::new(
        "rank-bars",
        "Each rank's steps, summed",
        &[
            ("rank", true),
            (
                "compute · exposed communication · exposed memcpy · other · idle",
                false,
            ),
            ("in steps", true),
            ("waited in collectives", true),
            ("comm/comp overlap", true),
            ("first step starts", true),
            ("clock offset (ns)", true),
        ],
    );
    for row in &r.ranks {
        let sum = |g: fn(&StepTimes) -> i64| row.steps.iter().map(g).sum::<i64>();
        let wall = sum(|s| s.wall_ns).max(1);
        let parts = [
            ("compute", "compute", sum(|s| s.compute_ns)),
            ("comm", "exposed communication", sum(|s| s.exposed_comm_ns)),
            ("memory", "exposed memcpy", sum(|s| s.exposed_memcpy_ns)),
            ("other", "other", sum(|s| s.exposed_other_ns)),
            ("idle", "idle", sum(|s| s.idle_ns)),
        ];
        let bar = parts
            .iter()
            .filter(|p| p.2 > 0)
            .map(|&(class, what, ns)| {
                let pct = 100.0 * ns as f64 / wall as f64;
                BarPart {
                    class: class.into(),
                    pct,
                    title: format!("{what}: {} ({pct:.2}%)", fmt(ns)),
                }
            })
            .collect();
        t.rows.push(
            ViewRow::of(vec![
                num(row.rank.to_string()),
                ViewCell {
                    class: "bar-cell".into(),
                    bar,
                    ..ViewCell::default()
                },
                num(fmt(sum(|s| s.wall_ns))),
                num(fmt(row.wait_ns.iter().sum())),
                num(row
                    .comm_comp_overlap_pct
                    .map_or("—".to_string(), |p| format!("{p:.1}%"))),
                num(format!("+{}", fmt(row.start_offset_ns))),
                ViewCell {
                    class: "num".into(),
                    title: "added to the trace's timestamps to put every rank on one clock (baseTimeNanoseconds)".into(),
                    ..ViewCell::text(row.clock_offset_ns.to_string())
                },
            ])
            .data("rank", row.rank)
            .data("clock-offset-ns", row.clock_offset_ns),
        );
    }
    t
}

fn collectives(r: &RanksReport) -> ViewTable {
    let mut t = ViewTable::new(
        "rank-collectives",
        "Collectives by arrival skew",
        &[
            ("collective", false),
            ("group", false),
            ("seq", true),
            ("step", true),
            ("bytes", true),
            ("skew", true),
            ("last rank", true),
            ("transfer", true),
            ("bus bandwidth", true),
        ],
    );
    for c in r.collectives.iter().take(COLLECTIVES_SHOWN) {
        let mut row = ViewRow::of(vec![
            c.name.clone().into(),
            c.group.clone().into(),
            num(c.seq.to_string()),
            num(c.step.map_or("—".to_string(), |s| s.to_string())),
            num(c.bytes.map_or("—".to_string(), table::fmt_bytes)),
            num(fmt(c.skew_ns)),
            num(c.last_rank.to_string()),
            num(c.transfer_ns.map_or("—".to_string(), fmt)),
            num(c
                .busbw_gbps
                .map_or("—".to_string(), |b| format!("{b:.1} GB/s"))),
        ])
        .data("seq", c.seq)
        .data("group", &c.group)
        .data("last-rank", c.last_rank)
        .data("skew-ns", c.skew_ns);
        row.data.extend(stack_data(r, c));
        t.rows.push(row);
    }
    t.note = format!(
        "Click a collective to open its ranks' timelines stacked at it (up to {STACKED_RANKS} ranks: the last and first to arrive and ranks between).",
    );
    if r.collectives.len() > COLLECTIVES_SHOWN {
        t.note += &format!(
            " {} more in the JSON download.",
            r.collectives.len() - COLLECTIVES_SHOWN
        );
    }
    t
}

/// A heat-map cell's colours for `x` in 0..=1 of the column's largest:
/// lighter to darker blue, dark text on the light half and white on the
/// dark half. The lightness skips 50–60 %, where neither text colour
/// reaches WCAG's 4.5:1 against this blue.
fn heat_style(x: f64) -> String {
    if x > 0.6 {
        format!(
            "background:hsl(215,70%,{:.0}%);color:#fff",
            50.0 - 12.0 * (x - 0.6) / 0.4
        )
    } else {
        format!(
            "background:hsl(215,70%,{:.0}%);color:#1d232b",
            96.0 - 36.0 * x / 0.6
        )
    }
}

#[cfg(test)]
mod tests {
    /// WCAG 2 relative luminance of an sRGB colour (components 0..=1).
    fn luminance(rgb: [f64; 3]) -> f64 {
        let lin = |c: f64| {
            if c <= 0.03928 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2])
    }

    fn hsl(h: f64, s: f64, l: f64) -> [f64; 3] {
        let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
        let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
        let m = l - c / 2.0;
        let (r, g, b) = match (h / 60.0) as u32 {
            0 => (c, x, 0.0),
            1 => (x, c, 0.0),
            2 => (0.0, c, x),
            3 => (0.0, x, c),
            4 => (x, 0.0, c),
            _ => (c, 0.0, x),
        };
        [r + m, g + m, b + m]
    }

    #[test]
    fn heat_map_text_reads_on_every_cell_colour_wcag_aa() {
        for k in 0..=100 {
            let style = super::heat_style(k as f64 / 100.0);
            let l: f64 = style
                .split("hsl(215,70%,")
                .nth(1)
                .and_then(|r| r.split('%').next())
                .unwrap()
                .parse()
                .unwrap();
            let bg = luminance(hsl(215.0, 0.7, l / 100.0));
            let fg = if style.ends_with("#fff") {
                1.0
            } else {
                luminance([29.0 / 255.0, 35.0 / 255.0, 43.0 / 255.0])
            };
            let ratio = (bg.max(fg) + 0.05) / (bg.min(fg) + 0.05);
            assert!(ratio >= 4.5, "{style}: {ratio:.2}");
        }
    }

    use super::*;
    use tracelane_core::analysis::ranks::{ranks, RankSummary};
    use tracelane_core::{import_bytes, ImportOptions};

    #[test]
    fn a_long_run_shares_heat_map_columns_between_steps() {
        use tracelane_core::analysis::ranks::{RankRow, RankSource, StepStraggler, StepTimes};
        let steps: Vec<u64> = (0..1000).collect();
        let row = |rank: i64| RankRow {
            rank,
            input: rank as usize,
            source: format!("rank{rank}.json"),
            basis: tracelane_core::analysis::ranks::Basis::Device,
            clock_offset_ns: 0,
            start_offset_ns: 0,
            steps: steps
                .iter()
                .map(|&s| StepTimes {
                    step: s,
                    start_ns: 0,
                    wall_ns: 1000 + s as i64 + rank,
                    compute_ns: 0,
                    exposed_comm_ns: 0,
                    exposed_memcpy_ns: 0,
                    exposed_other_ns: 0,
                    idle_ns: 0,
                    comm_ns: 0,
                    comm_overlapped_ns: 0,
                })
                .collect(),
            comm_comp_overlap_pct: None,
            hta: None,
            wait_ns: vec![0; steps.len()],
        };
        let r = RanksReport {
            rank_source: RankSource::DistributedInfo,
            ranks: vec![row(0), row(1)],
            steps: steps.clone(),
            stragglers: steps
                .iter()
                .map(|&s| StepStraggler {
                    step: s,
                    rank: 1,
                    by: "collectives".into(),
                    blame_ns: 1,
                    others_waited_ns: 1,
                    wall_max_ns: 0,
                    wall_min_ns: 0,
                    collectives: 1,
                })
                .collect(),
            collectives: Vec::new(),
            mismatched: 0,
            unmatched_calls: 0,
            unmatched_by_kind: Default::default(),
            notes: Vec::new(),
        };
        let heat = heat_map(&r, &MEASURES[0]);
        // 1000 steps, 17 to a column: 59 columns and the rank column.
        assert_eq!(heat.head.len(), 1 + 1000usize.div_ceil(17));
        assert_eq!(heat.head[1], "steps 0–16");
        // The first column of rank 0: the mean of 1000 … 1016.
        assert_eq!(
            heat.rows[0].cells[1].text,
            crate::shared::table::fmt_ns(1008.0)
        );
        assert!(heat.rows[1]
            .cells
            .iter()
            .skip(1)
            .all(|c| c.class.contains("straggler")));
        assert!(heat.rows[0]
            .cells
            .iter()
            .all(|c| !c.class.contains("straggler")));
    }

    #[test]
    fn the_view_lists_every_straggler_cell_and_collective_of_the_report() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/synth-ranks");
        let summaries: Vec<RankSummary> = (0..4)
            .map(|r| {
                let name = format!("rank{r}.pt.trace.json.gz");
                let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
                let t = import_bytes(&bytes, ImportOptions::default()).unwrap();
                RankSummary::of(&t, &name, &|i| t.slice_args_json(i).to_string())
            })
            .collect();
        let r = ranks(&summaries);
        let v = ranks_view(&r);
        let table = |id: &str| v.tables.iter().find(|t| t.id == id).unwrap();
        assert_eq!(table("stragglers").rows.len(), r.steps.len());
        let by_rank = table("straggler-ranks");
        assert_eq!(by_rank.rows.len(), 1);
        assert_eq!(
            by_rank.rows[0].data,
            [
                ("rank".to_string(), "2".to_string()),
                ("steps".to_string(), r.steps.len().to_string())
            ]
        );
        let heat = table("heat-map");
        assert_eq!(heat.rows.len(), 4);
        let stragglers = heat
            .rows
            .iter()
            .flat_map(|row| &row.cells)
            .filter(|c| c.class.contains("straggler"))
            .count();
        assert_eq!(stragglers, r.steps.len());
        assert_eq!(v.tables.iter().filter(|t| t.group == "heat").count(), 4);
        // 19 steps: a column each.
        assert_eq!(heat.head.len(), 1 + r.steps.len());
        assert_eq!(
            table("rank-collectives").rows.len(),
            COLLECTIVES_SHOWN.min(r.collectives.len())
        );
        // Each bar's parts cover its rank's steps.
        for row in &table("rank-bars").rows {
            let pct: f64 = row.cells[1].bar.iter().map(|p| p.pct).sum();
            assert!((pct - 100.0).abs() < 1e-6, "{pct}");
        }
    }

    #[test]
    fn a_wide_collectives_timeline_keeps_the_last_and_first_to_arrive() {
        let c = Collective {
            name: "allreduce".into(),
            group: "0".into(),
            seq: 0,
            seq_from_args: false,
            step: None,
            bytes: None,
            ranks: 64,
            first_arrival_ns: 0,
            skew_ns: 0,
            last_rank: 0,
            first_rank: 0,
            transfer_ns: None,
            algbw_gbps: None,
            busbw_gbps: None,
            // Rank k arrives at (k * 37) % 64: rank 0 first, rank 19 last.
            calls: (0..64).map(|k| (k, (k * 37) % 64, 100, 0)).collect(),
        };
        let shown = stacked_calls(&c);
        assert_eq!(shown.len(), STACKED_RANKS);
        let ranks: Vec<i64> = shown.iter().map(|&k| c.calls[k].0).collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]));
        assert!(ranks.contains(&0) && ranks.contains(&19), "{ranks:?}");
        let few = Collective {
            calls: c.calls[..3].to_vec(),
            ..c
        };
        assert_eq!(stacked_calls(&few), vec![0, 1, 2]);
    }
}
