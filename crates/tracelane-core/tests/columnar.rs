//! The columnar export read back with the Parquet reader: one row per
//! slice, per device event, per op of `key_averages()`, per step and per
//! collective call, with the figures the analyses give. (DuckDB reading a
//! whole exported set is `scripts/check-duckdb.sh`.)

mod common;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::analysis::ranks::{ranks, RankSummary};
use tracelane_core::category::Category;
use tracelane_core::columnar::{rank_tables, trace_tables, TABLES};

fn rows(bytes: &[u8]) -> Vec<Vec<(String, Field)>> {
    let r = SerializedFileReader::new(bytes::Bytes::copy_from_slice(bytes)).unwrap();
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .collect()
}

fn get<'a>(row: &'a [(String, Field)], key: &str) -> &'a Field {
    &row.iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("{key}"))
        .1
}

#[test]
fn every_table_has_a_row_per_thing_it_lists() {
    let names: Vec<String> = (0..4)
        .map(|r| format!("synth-ranks/rank{r}.pt.trace.json.gz"))
        .collect();
    let traces: Vec<_> = names.iter().map(|n| common::load(n)).collect();
    let summaries: Vec<RankSummary> = traces
        .iter()
        .zip(&names)
        .map(|(t, n)| RankSummary::of(t, n, &|i| t.slice_args_json(i).to_string()))
        .collect();
    let report = ranks(&summaries);
    let t = &traces[2];
    let per_trace = trace_tables(t, "job-a").unwrap();
    let per_rank = rank_tables(&report, 2, &summaries[2], "job-a").unwrap();
    let all: Vec<&str> = per_trace.iter().chain(&per_rank).map(|x| x.0).collect();
    assert_eq!(all, TABLES);
    let table = |name: &str| {
        rows(
            &per_trace
                .iter()
                .chain(&per_rank)
                .find(|x| x.0 == name)
                .unwrap()
                .1,
        )
    };

    let slices = table("slices");
    assert_eq!(slices.len(), t.slices.len());
    assert_eq!(get(&slices[0], "job"), &Field::Str("job-a".into()));
    let first = get(&slices[0], "start_ns");
    assert_eq!(
        first,
        &Field::Long(t.slices.start_ns[0] + t.clock_offset_ns)
    );

    let device = table("device_events");
    let kernels = (0..t.slices.len())
        .filter(|&i| matches!(t.slices.category[i], Category::Kernel | Category::Memcpy))
        .count();
    assert_eq!(device.len(), kernels);
    let memcpy: Vec<_> = device
        .iter()
        .filter(|r| get(r, "kind") == &Field::Str("memcpy".into()))
        .collect();
    assert!(!memcpy.is_empty());
    assert!(memcpy
        .iter()
        .all(|r| matches!(get(r, "bytes"), Field::Long(b) if *b > 0)));
    assert!(device
        .iter()
        .all(|r| matches!(get(r, "step"), Field::Long(_))));
    let comm = device
        .iter()
        .filter(|r| get(r, "kernel_type") == &Field::Str("communication".into()))
        .count();
    assert_eq!(comm, summaries[2].collectives.len());

    let ops = op_table(t, OpTableOptions::default());
    let op_rows = table("op_table");
    assert_eq!(op_rows.len(), ops.rows.len());
    for (r, o) in op_rows.iter().zip(&ops.rows) {
        assert_eq!(get(r, "name"), &Field::Str(o.name.clone()));
        assert_eq!(get(r, "cpu_self_ns"), &Field::Long(o.cpu_self_ns));
        assert_eq!(get(r, "device_total_ns"), &Field::Long(o.device_total_ns));
    }

    let steps = table("steps");
    let row = &report.ranks[2];
    assert_eq!(steps.len(), row.steps.len());
    for (r, s) in steps.iter().zip(&row.steps) {
        assert_eq!(get(r, "wall_ns"), &Field::Long(s.wall_ns));
        assert_eq!(get(r, "exposed_comm_ns"), &Field::Long(s.exposed_comm_ns));
    }

    let coll = table("collectives");
    assert_eq!(coll.len(), summaries[2].collectives.len());
    // Rank 2 is the straggler: it arrived last wherever anyone did.
    let waited: i64 = coll
        .iter()
        .map(|r| match get(r, "wait_ns") {
            Field::Long(w) => *w,
            other => panic!("{other:?}"),
        })
        .sum();
    assert!(waited < 50_000, "{waited}");

    let b = table("breakdown");
    assert_eq!(b.len(), 1);
    assert_eq!(get(&b[0], "basis"), &Field::Str("device".into()));
    assert!(matches!(get(&b[0], "hta_compute_us"), Field::Double(x) if *x > 0.0));
}
