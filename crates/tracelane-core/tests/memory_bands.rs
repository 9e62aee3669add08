//! Each allocation a band over real time (`memory_snapshot::bands`,
//! memory_viz's Active Memory Timeline on epoch time): on the H200
//! training snapshot the drawn bands tile the stack without gap or overlap
//! at every entry and reach the replayed allocated curve; budgets
//! summarise the smallest; a range keeps what is live in it; the raster
//! puts each band where its bytes are.

use tracelane_core::memory_snapshot::bands::{
    BandOptions, BandView, Bands, Clock, CELL_EMPTY, CELL_SUMMARY, LIVE_AT_END,
};
use tracelane_core::memory_snapshot::parts::lanes_and_report;
use tracelane_core::memory_snapshot::{read, Action, DeviceTrace, MemorySnapshot};

fn snap(name: &str) -> MemorySnapshot {
    let p = format!(
        "{}/../../tests/fixtures/memory-snapshots/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    read(&std::fs::read(&p).unwrap()).unwrap()
}

/// The drawn bands live at `t`, as (offset, size), bottom first.
fn stack_at(b: &Bands, t: i64) -> Vec<(u64, u64)> {
    let mut live: Vec<(u64, u64)> = (0..b.bands.len())
        .filter_map(|k| b.offset_at(k, t).map(|o| (o, b.bands[k].size)))
        .collect();
    live.sort();
    live
}

/// Bands tile `[0, total)` with neither gap nor overlap; returns the total.
fn tiled(live: &[(u64, u64)], what: &str) -> u64 {
    let mut at = 0;
    for &(o, s) in live {
        assert_eq!(o, at, "{what}: a band at {o} where the stack is {at} high");
        at += s;
    }
    at
}

/// The allocated curve's value at epoch ns `t` (the last point at or
/// before it).
fn allocated_at(points: &[(i64, f64)], t: i64) -> u64 {
    let i = points.partition_point(|p| p.0 <= t);
    points[i.saturating_sub(1)].1 as u64
}

#[test]
fn every_allocation_drawn_alone_stacks_to_the_allocated_curve_at_every_entry() {
    let s = snap("snap_train_cuda.pickle");
    let (lanes, _) = lanes_and_report(&s);
    let b = Bands::build(&s, 0, BandOptions::default());
    assert_eq!(b.clock, Clock::EpochNs);
    assert_eq!(b.summarised, 0, "everything fits the default budget");
    assert_eq!(b.allocations, b.bands.len() as u64);
    let e = &s.entries;
    let mut checked = 0;
    for r in s.devices[0].entries.clone() {
        let t = e.time_us[r as usize] * 1000;
        // After every entry of that microsecond (the curve keeps the last).
        let total = tiled(&stack_at(&b, t), &format!("entry {r}"));
        assert_eq!(total, allocated_at(&lanes[0].allocated, t), "entry {r}");
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
    assert_eq!(
        b.peak,
        lanes[0].allocated.iter().map(|p| p.1 as u64).max().unwrap()
    );
}

#[test]
fn a_budget_draws_the_largest_alone_and_summarises_the_rest_on_top() {
    let s = snap("snap_train_cuda.pickle");
    let all = Bands::build(&s, 0, BandOptions::default());
    let few = Bands::build(
        &s,
        0,
        BandOptions {
            max_bands: 20,
            ..BandOptions::default()
        },
    );
    assert_eq!(few.bands.len(), 20);
    assert_eq!(few.summarised + 20, all.allocations);
    let mut sizes: Vec<u64> = all.bands.iter().map(|b| b.size).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(few.smallest_drawn, sizes[19]);
    assert!(few.bands.iter().all(|b| b.size >= sizes[19]));
    // The summary sits on the drawn bands: the stack's top is the same.
    assert_eq!(few.peak, all.peak);
    // Still tiled at every entry.
    for r in s.devices[0].entries.clone() {
        tiled(&stack_at(&few, s.entries.time_us[r as usize] * 1000), "few");
    }
    // A piece budget too small halves the bands until the pieces fit.
    let tight = Bands::build(
        &s,
        0,
        BandOptions {
            max_pieces: all.piece_count() / 4,
            ..BandOptions::default()
        },
    );
    assert!(tight.piece_count() <= all.piece_count() / 4);
    assert!(tight.bands.len() < all.bands.len());
    assert_eq!(tight.summarised + tight.bands.len() as u64, all.allocations);
}

#[test]
fn a_range_keeps_what_is_live_in_it() {
    let s = snap("snap_train_cuda.pickle");
    let all = Bands::build(&s, 0, BandOptions::default());
    let (from, to) = (all.from, all.to);
    let (a, z) = (from + (to - from) / 3, from + (to - from) / 2);
    let part = Bands::build(
        &s,
        0,
        BandOptions {
            range: Some((a, z)),
            ..BandOptions::default()
        },
    );
    assert_eq!((part.from, part.to), (a, z));
    let live = all.bands.iter().filter(|b| b.from < z && b.to > a).count();
    assert_eq!(part.bands.len(), live);
    for t in [a, (a + z) / 2, z - 1] {
        let whole: Vec<u64> = stack_at(&all, t).iter().map(|x| x.1).collect();
        let ranged: Vec<u64> = stack_at(&part, t).iter().map(|x| x.1).collect();
        // The same allocations in the same stack order: what was freed
        // before the range is not under them.
        assert_eq!(whole, ranged, "at {t}");
    }
}

/// A device trace of three allocations on a clock of whole microseconds.
fn three_allocations() -> MemorySnapshot {
    let mut s = MemorySnapshot::default();
    let mb = 1u64 << 20;
    // (action, addr, size, µs): A and B made, A freed (B drops to the
    // bottom), C made on B.
    let rows = [
        (Action::Alloc, 0x1000_0000, 4 * mb, 10),
        (Action::Alloc, 0x2000_0000, 2 * mb, 20),
        (Action::FreeCompleted, 0x1000_0000, 4 * mb, 30),
        (Action::Alloc, 0x3000_0000, 2 * mb, 40),
        (Action::Snapshot, 0, 0, 50),
    ];
    for (action, addr, size, us) in rows {
        s.entries.action.push(action);
        s.entries.addr.push(addr);
        s.entries.size.push(size);
        s.entries.time_us.push(us);
        s.entries.stream.push(0);
        s.entries.stack.push(0);
    }
    s.stack_starts = vec![0, 0];
    s.devices.push(DeviceTrace {
        device: 0,
        entries: 0..rows.len() as u32,
    });
    s
}

#[test]
fn a_free_moves_the_bands_above_it_down_at_its_time() {
    let s = three_allocations();
    let b = Bands::build(&s, 0, BandOptions::default());
    let mb = 1u64 << 20;
    assert_eq!(b.bands.len(), 3);
    let us = |u: i64| u * 1000;
    assert_eq!(b.offset_at(1, us(25)), Some(4 * mb));
    assert_eq!(b.offset_at(1, us(30)), Some(0), "B drops when A is freed");
    assert_eq!(b.offset_at(0, us(30)), None, "A is gone");
    assert_eq!(b.offset_at(2, us(45)), Some(2 * mb), "C sits on B");
    assert_eq!(b.bands[0].to, us(30));
    assert!(b.bands[0].freed);
    assert_eq!(b.bands[1].to, LIVE_AT_END);
    assert_eq!(b.peak, 6 * mb);
    // A 4 × 6 raster of 10 µs columns and 1 MiB rows, from 10 µs.
    let v = BandView {
        from: us(10),
        to: us(50),
        width: 4,
        height: 6,
        top: 6 * mb,
    };
    let cells = b.raster(&v);
    let at = |col: usize, row_from_bottom: usize| cells[(5 - row_from_bottom) * 4 + col];
    let (a, bb, c) = (1, 2, 3);
    assert_eq!((at(0, 0), at(0, 3), at(0, 4)), (a, a, CELL_EMPTY));
    assert_eq!((at(1, 0), at(1, 4), at(1, 5)), (a, bb, bb));
    assert_eq!((at(2, 0), at(2, 1), at(2, 2)), (bb, bb, CELL_EMPTY));
    assert_eq!(
        (at(3, 1), at(3, 2), at(3, 3), at(3, 4)),
        (bb, c, c, CELL_EMPTY)
    );
    let info = b.describe(&s, bb, 5).unwrap();
    assert_eq!(
        (info.size, info.from, info.to),
        (2 * mb, Some(us(20)), None)
    );
    // One band drawn alone: the other two are the summary, on top of it.
    let one = Bands::build(
        &s,
        0,
        BandOptions {
            max_bands: 1,
            ..BandOptions::default()
        },
    );
    assert_eq!((one.bands.len(), one.summarised), (1, 2));
    let cells = one.raster(&v);
    let at = |col: usize, row_from_bottom: usize| cells[(5 - row_from_bottom) * 4 + col];
    assert_eq!(at(1, 0), 1, "A, drawn alone");
    assert_eq!(at(1, 5), CELL_SUMMARY, "B, summarised, over A at 20 µs");
    assert!(one.describe(&s, CELL_SUMMARY, 5).unwrap().band.is_none());
}

#[test]
fn a_snapshot_without_times_is_drawn_on_entry_numbers() {
    let mut s = three_allocations();
    s.entries.time_us.iter_mut().for_each(|t| *t = 0);
    let b = Bands::build(&s, 0, BandOptions::default());
    assert_eq!(b.clock, Clock::Entry);
    assert_eq!(b.offset_at(1, 2), Some(0));
    assert_eq!(b.offset_at(1, 1), Some(4 << 20));
}

/// Found by the fuzzer: an entry whose `time_us` runs back (a mutated H200
/// snapshot). The bands are drawn on a clock that never runs back, and at
/// every moment they still tile the stack.
#[test]
fn entries_out_of_time_order_still_stack_without_gap_or_overlap() {
    let p = format!(
        "{}/../../tests/fixtures/edge/snapshot_bands_time_back.pickle",
        env!("CARGO_MANIFEST_DIR")
    );
    let s = read(&std::fs::read(&p).unwrap()).unwrap();
    for d in 0..s.devices.len() {
        let b = Bands::build(&s, d, BandOptions::default());
        assert!(!b.bands.is_empty());
        for r in s.devices[d].entries.clone() {
            let t = s.entries.time_us[r as usize].saturating_mul(1000);
            tiled(&stack_at(&b, t), &format!("entry {r}"));
        }
        let mid = b.from + (b.to - b.from) / 2;
        tiled(&stack_at(&b, mid), "the middle");
    }
}
