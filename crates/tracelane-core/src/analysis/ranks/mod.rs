//! Many ranks of one distributed run: per rank and step the time
//! breakdown, the collectives matched across ranks with their arrival
//! skew, and the straggler each step waited for.
//!
//! The work is split so that no process holds every rank's model: each
//! rank's trace is reduced to a [`RankSummary`] (small, serialisable: what
//! a worker sends back), and [`ranks`] combines the summaries.
//!
//! Rules:
//! - **Which rank**: `distributedInfo.rank` when every trace has one and no
//!   two share it; else a number in the file name (`rank3`, `…_3.json`)
//!   when those are distinct; else the order given. The report says which.
//! - **Clocks**: every time is put on the epoch clock (the trace's
//!   `baseTimeNanoseconds` added to its timestamps; absolute timestamps
//!   as they are); each rank's offset is shown.
//! - **Step breakdown** (per `ProfilerStep#N`, over the step's host range
//!   `[start, end)`; the parts sum to the step's wall time): device work
//!   of the rank clipped to the window — *compute* is computation kernels'
//!   union, *exposed communication* collective kernels not under compute,
//!   *exposed memcpy* copies and sets under neither, *other* the remaining
//!   device work under none of those, *idle* the rest. A rank without
//!   device work (CPU runs, e.g. gloo) is measured on the host: compute is
//!   its ops' union less the collective ops (`c10d::*`,
//!   `record_param_comms`), communication the backend's work ranges
//!   (`gloo:*`, `nccl:*` …, on the backend's threads).
//! - **Overlap** (`comm_comp_overlap_pct`): communication time under
//!   computation ÷ communication time, over the rank's steps (over the
//!   whole trace when it has none). HTA's own figures for the whole trace
//!   (`get_temporal_breakdown`, `get_comm_comp_overlap`) are given beside
//!   them under `hta` for ranks with device work.
//! - **Collectives**: a rank's collective calls are found from the CPU
//!   side and tied to the kernels they launched ([`super::collectives`]: every
//!   kind — all-reduce, all-gather, reduce-scatter, all-to-all, broadcast,
//!   reduce, barrier, send / recv — whatever its kernel is called) or,
//!   without device work, its backend's work ranges (`gloo:all_reduce` …,
//!   sizes from the input shapes). A rank *arrives* when its first kernel
//!   (work) starts: the kernel then waits for its peers inside, so the
//!   ends line up. Calls are matched across ranks by process group and
//!   sequence number (`Seq` where every call has it, else the order of
//!   the calls in the group on each rank); a send with the recv of its
//!   peer (`Dst Rank` / `Src Rank`), in order between the two ranks. A
//!   match whose kinds or sizes differ between ranks is counted as
//!   mismatched and kept apart; what cannot be matched is counted per kind
//!   (`unmatched_by_kind`), never filed under another kind.
//! - **Skew** = latest arrival − earliest; the rank that arrived last is
//!   named. Each rank's *wait* in a collective = latest arrival − its own.
//! - **Bandwidth** (nccl-tests' definitions, `doc/PERFORMANCE.md`): the
//!   time is from the last arrival to the mean end (the transfer once all
//!   are present); algorithm bandwidth = S / time with S the buffer
//!   (all-gather: the output, reduce-scatter: the input); bus bandwidth =
//!   algorithm bandwidth × 2(n−1)/n for all-reduce, (n−1)/n for
//!   all-gather, reduce-scatter and all-to-all, 1 for broadcast, reduce
//!   and send/recv.
//! - **Straggler** of a step: among the step's matched collectives (the
//!   step of the last rank to arrive), the rank that was last most by
//!   time — the sum of the skews of the collectives it arrived last at —
//!   with how long the others waited for it (each such collective's mean
//!   wait of the other ranks, summed). A step without matched collectives
//!   names its slowest rank by wall time instead, and says so.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::collectives::{bus_factor, is_point_to_point};

mod summary;

pub use summary::{args_read_by_summary, Basis, CollectiveCall, HtaRank, RankSummary, StepTimes};

/// Where each rank's number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    DistributedInfo,
    FileName,
    Order,
}

impl RankSource {
    pub fn describe(self) -> &'static str {
        match self {
            RankSource::DistributedInfo => "ranks from each trace's distributedInfo.rank",
            RankSource::FileName => {
                "ranks from the file names (the traces' distributedInfo does not give distinct ranks)"
            }
            RankSource::Order => {
                "ranks in the order the files were given (neither distributedInfo nor the file names give distinct ranks)"
            }
        }
    }
}

/// One rank in the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub rank: i64,
    /// The summary's index in the slice given to [`ranks`].
    pub input: usize,
    pub source: String,
    pub basis: Basis,
    pub clock_offset_ns: i64,
    /// The rank's first step start − the set's earliest (epoch clock).
    pub start_offset_ns: i64,
    pub steps: Vec<StepTimes>,
    pub comm_comp_overlap_pct: Option<f64>,
    pub hta: Option<HtaRank>,
    /// Time this rank waited in collectives for later ranks, per step
    /// (same order as `steps`).
    pub wait_ns: Vec<i64>,
}

/// A collective matched across ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Collective {
    pub name: String,
    pub group: String,
    /// `Seq` from the args, else the call's index in its group.
    pub seq: u64,
    pub seq_from_args: bool,
    pub step: Option<u64>,
    pub bytes: Option<u64>,
    pub ranks: u32,
    pub first_arrival_ns: i64,
    pub skew_ns: i64,
    pub last_rank: i64,
    pub first_rank: i64,
    /// Last arrival → mean end; `None` where the mean end is not after the
    /// last arrival (the ranks' clocks apart, or calls matched by order
    /// that are not one collective): no transfer time to speak of.
    pub transfer_ns: Option<i64>,
    pub algbw_gbps: Option<f64>,
    pub busbw_gbps: Option<f64>,
    /// Per rank in the report's rank order: (rank, arrival ns, end ns, slice).
    pub calls: Vec<(i64, i64, i64, u32)>,
}

/// The straggler of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepStraggler {
    pub step: u64,
    pub rank: i64,
    /// `collectives`: last to arrive by time; `wall`: no matched
    /// collectives in the step, the rank with the longest step.
    pub by: String,
    /// Sum of skews of the collectives it arrived last at.
    pub blame_ns: i64,
    /// How long the others waited for it (mean over the other ranks, summed).
    pub others_waited_ns: i64,
    /// The step's wall time, slowest and fastest rank.
    pub wall_max_ns: i64,
    pub wall_min_ns: i64,
    pub collectives: u32,
}

/// The whole set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RanksReport {
    pub rank_source: RankSource,
    pub ranks: Vec<RankRow>,
    /// Every step number any rank has, ascending.
    pub steps: Vec<u64>,
    pub stragglers: Vec<StepStraggler>,
    /// Largest skew first.
    pub collectives: Vec<Collective>,
    /// Matched calls whose kind or size differ between ranks.
    pub mismatched: u64,
    /// Calls present on only some of their group's ranks.
    pub unmatched_calls: u64,
    /// Everything not matched, by kind: calls on one rank only, sends and
    /// recvs without their peer, kernels tied to no call, host calls
    /// without their kernels.
    #[serde(default)]
    pub unmatched_by_kind: BTreeMap<String, u64>,
    pub notes: Vec<String>,
}

/// A number in a file name: the digits after `rank`, else the last run of
/// digits.
fn rank_from_name(name: &str) -> Option<i64> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    if let Some(pos) = lower.find("rank") {
        let digits: String = lower[pos + 4..]
            .trim_start_matches(['_', '-', '.'])
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        if let Ok(n) = digits.parse() {
            return Some(n);
        }
    }
    let mut last = None;
    let mut cur = String::new();
    for c in lower.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() {
            cur.push(c);
        } else if !cur.is_empty() {
            last = cur.parse().ok();
            cur.clear();
        }
    }
    last
}

fn distinct(v: &[Option<i64>]) -> Option<Vec<i64>> {
    let v: Vec<i64> = v.iter().copied().collect::<Option<_>>()?;
    let mut sorted = v.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == v.len()).then_some(v)
}

/// Combines the ranks' summaries.
pub fn ranks(summaries: &[RankSummary]) -> RanksReport {
    let mut notes = Vec::new();
    let (ids, rank_source) = rank_ids(summaries);
    let mut order: Vec<usize> = (0..summaries.len()).collect();
    crate::sort::by_key(&mut order, &|&k| ids[k]);
    let worlds: Vec<i64> = summaries.iter().filter_map(|s| s.world_size).collect();
    if let Some(&w) = worlds.iter().max() {
        if (summaries.len() as i64) < w {
            notes.push(format!(
                "{} of {w} ranks opened: collectives are matched among these",
                summaries.len()
            ));
        }
    }
    for s in summaries {
        for n in &s.notes {
            notes.push(format!("{}: {n}", s.source));
        }
    }
    let earliest = summaries
        .iter()
        .filter_map(|s| s.steps.first().map(|st| st.start_ns))
        .min()
        .unwrap_or(0);

    let mut unmatched_by_kind: BTreeMap<String, u64> = BTreeMap::new();
    for s in summaries {
        for (kind, n) in &s.unmatched {
            *unmatched_by_kind.entry(kind.clone()).or_default() += n;
        }
    }
    let (matched, use_seq) = match_calls(summaries, &ids, &order, &mut unmatched_by_kind);
    let (mut collectives, counts) = collectives_of(matched, &ids, use_seq, &mut unmatched_by_kind);
    let MatchCounts {
        mismatched,
        unmatched_calls,
        ended_before_last,
    } = counts;
    if mismatched > 0 {
        notes.push(format!(
            "{mismatched} collectives differ between ranks in kind or size at the same position (ranks issued different collectives, or calls were not recorded on every rank): left out"
        ));
    }
    if ended_before_last > 0 {
        notes.push(format!(
            "{ended_before_last} matched collectives end on one rank before another rank's call starts: the ranks' clocks are apart, or the calls are not the same collective (the trace names no process group or sequence number to tell)"
        ));
    }
    if unmatched_calls > 0 {
        notes.push(format!(
            "{unmatched_calls} collective calls have no counterpart on another opened rank: left out"
        ));
    }
    if !unmatched_by_kind.is_empty() {
        let list: Vec<String> = unmatched_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        notes.push(format!("not matched, by kind: {}", list.join(", ")));
    }

    let mut step_set: Vec<u64> = summaries
        .iter()
        .flat_map(|s| s.steps.iter().map(|st| st.step))
        .collect();
    step_set.sort_unstable();
    step_set.dedup();

    let (wait, blame) = waits(&collectives);
    let ranks_rows: Vec<RankRow> = order
        .iter()
        .map(|&k| {
            let s = &summaries[k];
            RankRow {
                rank: ids[k],
                input: k,
                source: s.source.clone(),
                basis: s.basis,
                clock_offset_ns: s.clock_offset_ns,
                start_offset_ns: s.steps.first().map_or(0, |st| st.start_ns - earliest),
                wait_ns: s
                    .steps
                    .iter()
                    .map(|st| wait.get(&(ids[k], st.step)).copied().unwrap_or(0))
                    .collect(),
                steps: s.steps.clone(),
                comm_comp_overlap_pct: s.comm_comp_overlap_pct,
                hta: s.hta.clone(),
            }
        })
        .collect();
    let stragglers = stragglers(&step_set, &ranks_rows, &collectives, &blame);
    crate::sort::by(&mut collectives, &|a, b| {
        b.skew_ns
            .cmp(&a.skew_ns)
            .then(a.group.cmp(&b.group))
            .then(a.seq.cmp(&b.seq))
    });
    RanksReport {
        rank_source,
        ranks: ranks_rows,
        steps: step_set,
        stragglers,
        collectives,
        mismatched,
        unmatched_calls,
        unmatched_by_kind,
        notes,
    }
}

/// Each summary's rank: from `distributedInfo` when every trace has a
/// distinct one, else from the file names, else the order given.
fn rank_ids(summaries: &[RankSummary]) -> (Vec<i64>, RankSource) {
    let from_info: Vec<Option<i64>> = summaries.iter().map(|s| s.rank).collect();
    let from_name: Vec<Option<i64>> = summaries
        .iter()
        .map(|s| rank_from_name(&s.source))
        .collect();
    if let Some(v) = distinct(&from_info) {
        (v, RankSource::DistributedInfo)
    } else if let Some(v) = distinct(&from_name) {
        (v, RankSource::FileName)
    } else {
        ((0..summaries.len() as i64).collect(), RankSource::Order)
    }
}

/// The calls at one position: (group, seq or index in group) → each
/// rank's call.
type Matched<'s> = BTreeMap<(String, u64), Vec<(usize, &'s CollectiveCall)>>;

/// Calls matched across ranks: (group, seq or index in group) → calls; a
/// send and its recv by (sender, receiver, index between the two).
/// Whether `Seq` numbered them.
fn match_calls<'s>(
    summaries: &'s [RankSummary],
    ids: &[i64],
    order: &[usize],
    unmatched_by_kind: &mut BTreeMap<String, u64>,
) -> (Matched<'s>, bool) {
    // by (sender, receiver, index between the two).
    let mut matched: Matched = BTreeMap::new();
    let use_seq = summaries.iter().all(|s| {
        s.collectives
            .iter()
            .filter(|c| !is_point_to_point(&c.name))
            .all(|c| c.seq.is_some())
    });
    for &k in order {
        let mut index: HashMap<(String, i64, i64), u64> = HashMap::new();
        for c in &summaries[k].collectives {
            let key = match (c.name.as_str(), c.peer) {
                ("send", Some(p)) => (format!("{}→{p}", ids[k]), ids[k], p),
                ("recv", Some(p)) => (format!("{p}→{}", ids[k]), p, ids[k]),
                (kind, _) if is_point_to_point(kind) => {
                    // Without its peer a send cannot be told from another.
                    *unmatched_by_kind.entry(kind.to_string()).or_default() += 1;
                    continue;
                }
                // Without `Seq`, the n-th call of a kind in a group: calls of
                // other kinds may sit in other groups the trace does not name.
                (kind, _) if !use_seq => (format!("{}\u{1f}{kind}", c.group), -1, -1),
                _ => (c.group.clone(), -1, -1),
            };
            let i = index.entry(key.clone()).or_default();
            let seq = if use_seq && key.1 < 0 {
                c.seq.unwrap_or(*i)
            } else {
                *i
            };
            *i += 1;
            let group = if key.1 < 0 {
                key.0
            } else {
                format!("p2p {}", key.0)
            };
            matched.entry((group, seq)).or_default().push((k, c));
        }
    }
    (matched, use_seq)
}

/// What matching left out or found odd.
struct MatchCounts {
    mismatched: u64,
    unmatched_calls: u64,
    ended_before_last: u64,
}

/// Each position's calls as one collective (kinds and sizes agreeing):
/// arrival skew, the last rank, transfer time and bandwidths.
fn collectives_of(
    matched: Matched,
    ids: &[i64],
    use_seq: bool,
    unmatched_by_kind: &mut BTreeMap<String, u64>,
) -> (Vec<Collective>, MatchCounts) {
    let mut collectives = Vec::new();
    let mut mismatched = 0u64;
    let mut unmatched_calls = 0u64;
    let mut ended_before_last = 0u64;
    for ((group, seq), calls) in matched {
        let p2p = group.starts_with("p2p ");
        if calls.len() < 2 {
            unmatched_calls += calls.len() as u64;
            for (_, c) in &calls {
                *unmatched_by_kind.entry(c.name.clone()).or_default() += 1;
            }
            continue;
        }
        let first = calls[0].1;
        let differ = if p2p {
            calls.len() != 2
                || calls[0].1.name == calls[1].1.name
                || calls[0].1.bytes != calls[1].1.bytes
        } else {
            // A root's buffers differ from the others' (gather, scatter),
            // and all-to-all may split unevenly: their sizes are not compared.
            let sized = !matches!(first.name.as_str(), "gather" | "scatter" | "alltoall");
            calls
                .iter()
                .any(|(_, c)| c.name != first.name || (sized && c.bytes != first.bytes))
        };
        if differ {
            mismatched += 1;
            continue;
        }
        let name = if p2p {
            "sendrecv".to_string()
        } else {
            first.name.clone()
        };
        let group = match group.split_once('\u{1f}') {
            Some((g, _)) => g.to_string(),
            None => group,
        };
        let (last_k, last) = calls
            .iter()
            .max_by_key(|(k, c)| (c.arrival_ns, std::cmp::Reverse(ids[*k])))
            .map(|&(k, c)| (k, c))
            .unwrap();
        let (first_k, early) = calls
            .iter()
            .min_by_key(|(k, c)| (c.arrival_ns, ids[*k]))
            .map(|&(k, c)| (k, c))
            .unwrap();
        let n = calls.len();
        let mean_end = calls.iter().map(|(_, c)| c.end_ns as i128).sum::<i128>() / n as i128;
        let transfer = mean_end as i64 - last.arrival_ns;
        // Only a collective every rank takes part in as an equal cannot end
        // anywhere before the last rank arrives: a root's or a sender's
        // part may (buffered).
        let all_wait = matches!(
            name.as_str(),
            "allreduce" | "allgather" | "reducescatter" | "alltoall" | "barrier"
        );
        if all_wait && calls.iter().any(|(_, c)| c.end_ns < last.arrival_ns) {
            ended_before_last += 1;
        }
        let algbw = first
            .bytes
            .filter(|_| transfer > 0)
            .map(|b| b as f64 / transfer as f64);
        collectives.push(Collective {
            busbw_gbps: algbw.map(|a| a * bus_factor(&name, n)),
            name,
            group,
            seq,
            seq_from_args: use_seq && !p2p,
            step: last.step,
            bytes: first.bytes,
            ranks: n as u32,
            first_arrival_ns: early.arrival_ns,
            skew_ns: last.arrival_ns - early.arrival_ns,
            last_rank: ids[last_k],
            first_rank: ids[first_k],
            transfer_ns: (transfer > 0).then_some(transfer),
            algbw_gbps: algbw,
            calls: calls
                .iter()
                .map(|&(k, c)| (ids[k], c.arrival_ns, c.end_ns, c.slice))
                .collect(),
        });
    }
    (
        collectives,
        MatchCounts {
            mismatched,
            unmatched_calls,
            ended_before_last,
        },
    )
}

/// Per step: the rank that arrived last, by whose lateness the others
/// waited; (skew, others' mean wait, collectives) by rank.
type Blame = BTreeMap<u64, HashMap<i64, (i64, i64, u32)>>;

/// Each rank's wait per step, and the blame per step.
fn waits(collectives: &[Collective]) -> (HashMap<(i64, u64), i64>, Blame) {
    let mut wait: HashMap<(i64, u64), i64> = HashMap::new();
    let mut blame: Blame = BTreeMap::new();
    for c in collectives {
        let last_arrival = c.first_arrival_ns + c.skew_ns;
        let Some(step) = c.step else { continue };
        let mut others = 0i64;
        for &(r, a, _, _) in &c.calls {
            *wait.entry((r, step)).or_default() += last_arrival - a;
            if r != c.last_rank {
                others += last_arrival - a;
            }
        }
        let e = blame
            .entry(step)
            .or_default()
            .entry(c.last_rank)
            .or_default();
        e.0 += c.skew_ns;
        e.1 += others / (c.calls.len() as i64 - 1).max(1);
        e.2 += 1;
    }
    (wait, blame)
}

/// Each step's straggler: the rank most blamed by the collectives, else
/// the one with the longest step.
fn stragglers(
    step_set: &[u64],
    ranks_rows: &[RankRow],
    collectives: &[Collective],
    blame: &Blame,
) -> Vec<StepStraggler> {
    let mut stragglers = Vec::new();
    for &step in step_set {
        let walls: Vec<(i64, i64)> = ranks_rows
            .iter()
            .filter_map(|r| {
                r.steps
                    .iter()
                    .find(|s| s.step == step)
                    .map(|s| (r.rank, s.wall_ns))
            })
            .collect();
        if walls.len() < 2 {
            continue;
        }
        let wall_max = walls.iter().map(|w| w.1).max().unwrap_or(0);
        let wall_min = walls.iter().map(|w| w.1).min().unwrap_or(0);
        let n_coll = collectives.iter().filter(|c| c.step == Some(step)).count() as u32;
        let s = match blame.get(&step).and_then(|b| {
            b.iter()
                .max_by_key(|(r, v)| (v.0, std::cmp::Reverse(**r)))
                .map(|(r, v)| (*r, *v))
        }) {
            Some((rank, (blame_ns, waited, _))) => StepStraggler {
                step,
                rank,
                by: "collectives".into(),
                blame_ns,
                others_waited_ns: waited,
                wall_max_ns: wall_max,
                wall_min_ns: wall_min,
                collectives: n_coll,
            },
            None => {
                let (rank, _) = walls
                    .iter()
                    .max_by_key(|(r, w)| (*w, std::cmp::Reverse(*r)))
                    .copied()
                    .unwrap();
                StepStraggler {
                    step,
                    rank,
                    by: "wall".into(),
                    blame_ns: 0,
                    others_waited_ns: 0,
                    wall_max_ns: wall_max,
                    wall_min_ns: wall_min,
                    collectives: 0,
                }
            }
        };
        stragglers.push(s);
    }
    stragglers
}

#[cfg(test)]
mod tests;
