//! rocprofv3's rocpd database (SQLite, rocprofv3's default output since
//! ROCm 7), read natively: its rows become rocprofv3's JSON records, which
//! the core's rocprofv3 reader imports — one reader for both outputs.
//!
//! Schema version 3 (rocprofiler-sdk `rocpd_tables.sql`): every table is
//! suffixed with the run's uuid; regions, dispatches and copies point at
//! `rocpd_timestamp` rows; names live in `rocpd_string`; each event's
//! correlation id and category in `rocpd_event`; tracks give the thread
//! (`rocpd_info_thread`), agent and queue. A database of several runs
//! (several suffixes) becomes one process per run's process.

use std::collections::BTreeMap;

use rusqlite::{Connection, OpenFlags};
use serde_json::{json, Map, Value};

/// Whether a file's first bytes are an SQLite database.
pub(crate) fn looks_like(head: &[u8]) -> bool {
    head.starts_with(b"SQLite format 3\0")
}

/// The database as rocprofv3 JSON text.
pub(crate) fn to_rocprof_json(path: &str) -> Result<Vec<u8>, String> {
    let db = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("cannot open the SQLite database: {e}"))?;
    let suffixes = suffixes(&db)?;
    if suffixes.is_empty() {
        return Err("an SQLite database that is not a rocprofv3 rocpd database (no rocpd_kernel_dispatch or rocpd_region table): an Nsight Systems export? Export it to JSON or Perfetto first".into());
    }
    let mut processes = Vec::new();
    for s in &suffixes {
        processes.extend(run(&db, s).map_err(|e| format!("rocpd database: {e}"))?);
    }
    let doc = json!({ "rocprofiler-sdk-tool": processes });
    serde_json::to_vec(&doc).map_err(|e| e.to_string())
}

/// The uuid suffixes of the runs the database holds.
fn suffixes(db: &Connection) -> Result<Vec<String>, String> {
    let mut st = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'rocpd_region%' OR name LIKE 'rocpd_kernel_dispatch%')")
        .map_err(|e| e.to_string())?;
    let names = st
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(|e| e.to_string())?;
    let mut out: Vec<String> = Vec::new();
    for n in names.flatten() {
        let s = n
            .strip_prefix("rocpd_kernel_dispatch")
            .or_else(|| n.strip_prefix("rocpd_region"))
            .unwrap_or("")
            .to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Ok(out)
}

fn table_exists(db: &Connection, name: &str) -> bool {
    db.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |_| Ok(()),
    )
    .is_ok()
}

/// Record lists and the kinds naming their operations, for one process.
#[derive(Default)]
struct Records {
    /// Kind name → (its index, its operations by name → index).
    kinds: BTreeMap<String, (usize, BTreeMap<String, usize>)>,
    lists: BTreeMap<&'static str, Vec<Value>>,
}

impl Records {
    /// The (kind, operation) indexes of a named operation of a kind.
    fn op(&mut self, kind: &str, name: &str) -> (usize, usize) {
        let next = self.kinds.len() + 1;
        let (k, ops) = self
            .kinds
            .entry(kind.to_string())
            .or_insert_with(|| (next, BTreeMap::new()));
        let n = ops.len();
        let o = *ops.entry(name.to_string()).or_insert(n);
        (*k, o)
    }

    /// `strings.buffer_records`: kinds by index, operations by index.
    fn strings(&self) -> Value {
        let mut kinds = vec![json!({"kind": "NONE", "operations": []}); self.kinds.len() + 1];
        for (name, (k, ops)) in &self.kinds {
            let mut names = vec![String::new(); ops.len()];
            for (op, i) in ops {
                names[*i] = op.clone();
            }
            kinds[*k] = json!({"kind": name, "operations": names});
        }
        Value::Array(kinds)
    }
}

/// Which record list a region of a category belongs to.
fn list_of(category: &str) -> &'static str {
    let c = category.to_ascii_uppercase();
    if c.starts_with("HIP") {
        "hip_api"
    } else if c.starts_with("HSA") {
        "hsa_api"
    } else if c.starts_with("MARKER") {
        "marker_api"
    } else if c.starts_with("RCCL") {
        "rccl_api"
    } else {
        "other_api"
    }
}

/// Rows of a query, each mapped by `f`.
fn query<T, P: rusqlite::Params>(
    db: &Connection,
    sql: &str,
    params: P,
    f: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut st = db.prepare(sql)?;
    let out = st.query_map(params, f)?.collect();
    out
}

/// Where a track's events sit: its process, OS thread id, agent, queue.
#[derive(Clone, Copy, Default)]
struct Track {
    process: Option<i64>,
    tid: i64,
    agent: Option<i64>,
    queue: Option<i64>,
}

/// What one run's tables say beside its events.
struct Tables {
    strings: BTreeMap<i64, String>,
    tracks: BTreeMap<i64, Track>,
}

impl Tables {
    fn read(db: &Connection, s: &str) -> rusqlite::Result<Tables> {
        let strings = query(
            db,
            &format!("SELECT id, string FROM \"rocpd_string{s}\""),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect();
        let threads: BTreeMap<i64, i64> = query(
            db,
            &format!("SELECT id, tid FROM \"rocpd_info_thread{s}\""),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .into_iter()
        .collect();
        let tracks = query(
            db,
            &format!("SELECT id, pid, tid, agent_id, queue_id FROM \"rocpd_track{s}\""),
            [],
            |r| {
                let thread: Option<i64> = r.get(2)?;
                Ok((
                    r.get(0)?,
                    Track {
                        process: r.get(1)?,
                        tid: thread.and_then(|t| threads.get(&t).copied()).unwrap_or(0),
                        agent: r.get(3)?,
                        queue: r.get(4)?,
                    },
                ))
            },
        )?
        .into_iter()
        .collect();
        Ok(Tables { strings, tracks })
    }

    fn text(&self, id: Option<i64>) -> String {
        id.and_then(|i| self.strings.get(&i))
            .cloned()
            .unwrap_or_default()
    }

    fn track(&self, id: i64) -> Track {
        self.tracks.get(&id).copied().unwrap_or_default()
    }
}

/// Times of a row: its `start_id` / `end_id` timestamps (SQL text).
fn timed(s: &str, table: &str, cols: &str) -> String {
    format!(
        "SELECT {cols}, ts.value, te.value, e.correlation_id, e.category_id FROM \"{table}{s}\" x \
         JOIN \"rocpd_timestamp{s}\" ts ON ts.id = x.start_id \
         JOIN \"rocpd_timestamp{s}\" te ON te.id = x.end_id \
         LEFT JOIN \"rocpd_event{s}\" e ON e.id = x.event_id"
    )
}

fn record(start: i64, end: i64, corr: Option<i64>, tid: i64) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("thread_id".into(), json!(tid));
    m.insert(
        "correlation_id".into(),
        json!({"internal": corr.unwrap_or(0), "external": 0}),
    );
    m.insert("start_timestamp".into(), json!(start));
    m.insert("end_timestamp".into(), json!(end));
    m
}

/// One run's processes as rocprofv3 JSON process objects.
fn run(db: &Connection, s: &str) -> rusqlite::Result<Vec<Value>> {
    let t = Tables::read(db, s)?;
    let procs: Vec<(i64, i64, String)> = query(
        db,
        &format!("SELECT p.id, p.pid, COALESCE(n.hostname, '') FROM \"rocpd_info_process{s}\" p LEFT JOIN \"rocpd_info_node{s}\" n ON n.id = p.nid"),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let mut out = Vec::new();
    for (row, pid, host) in procs {
        let agents = query(
            db,
            &format!("SELECT id, type, type_index, COALESCE(product_name, name, '') FROM \"rocpd_info_agent{s}\" WHERE pid = ?1"),
            [row],
            |r| {
                let ty: Option<String> = r.get(1)?;
                Ok(json!({"id": {"handle": r.get::<_, i64>(0)?},
                    "type": if ty.as_deref() == Some("GPU") { 2 } else { 1 },
                    "gpu_index": r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    "product_name": r.get::<_, String>(3)?}))
            },
        )?;
        let symbols = query(
            db,
            &format!("SELECT id, COALESCE(display_name, kernel_name, ''), COALESCE(kernel_name, '') FROM \"rocpd_info_kernel_symbol{s}\" WHERE pid = ?1"),
            [row],
            |r| Ok(json!({"kernel_id": r.get::<_, i64>(0)?,
                "formatted_kernel_name": r.get::<_, String>(1)?,
                "kernel_name": r.get::<_, String>(2)?})),
        )?;
        let mut rec = Records::default();
        regions(db, s, &t, row, &mut rec)?;
        dispatches(db, s, &t, row, &mut rec)?;
        copies(db, s, &t, row, &mut rec)?;
        allocations(db, s, &t, row, &mut rec)?;
        let mut buffer = Map::new();
        for (k, v) in std::mem::take(&mut rec.lists) {
            buffer.insert(k.to_string(), Value::Array(v));
        }
        out.push(json!({
            "metadata": {"pid": pid, "node": {"hostname": host}},
            "agents": agents,
            "strings": {"buffer_records": rec.strings()},
            "kernel_symbols": symbols,
            "buffer_records": buffer,
        }));
    }
    Ok(out)
}

/// Host API calls and markers (`rocpd_region`), by their event's category.
fn regions(
    db: &Connection,
    s: &str,
    t: &Tables,
    process: i64,
    rec: &mut Records,
) -> rusqlite::Result<()> {
    if !table_exists(db, &format!("rocpd_region{s}")) {
        return Ok(());
    }
    let sql = timed(s, "rocpd_region", "x.track_id, x.name_id");
    for (track, name, start, end, corr, cat) in query(db, &sql, [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<i64>>(4)?,
            r.get::<_, Option<i64>>(5)?,
        ))
    })? {
        let tr = t.track(track);
        if tr.process.is_some_and(|p| p != process) {
            continue;
        }
        let category = t.text(cat);
        let (kind, op) = rec.op(&category, &t.text(name));
        let mut m = record(start, end, corr, tr.tid);
        m.insert("kind".into(), json!(kind));
        m.insert("operation".into(), json!(op));
        rec.lists
            .entry(list_of(&category))
            .or_default()
            .push(Value::Object(m));
    }
    Ok(())
}

/// Kernel dispatches, on their track's agent and queue.
fn dispatches(
    db: &Connection,
    s: &str,
    t: &Tables,
    process: i64,
    rec: &mut Records,
) -> rusqlite::Result<()> {
    if !table_exists(db, &format!("rocpd_kernel_dispatch{s}")) {
        return Ok(());
    }
    let sql = timed(
        s,
        "rocpd_kernel_dispatch",
        "x.track_id, x.kernel_id, x.dispatch_id, x.workgroup_size_x, x.workgroup_size_y, x.workgroup_size_z, x.grid_size_x, x.grid_size_y, x.grid_size_z",
    );
    let rows = query(db, &sql, [], |r| {
        let v: Vec<i64> = (0..9)
            .map(|k| r.get::<_, Option<i64>>(k).map(|x| x.unwrap_or(0)))
            .collect::<rusqlite::Result<_>>()?;
        Ok((
            v,
            r.get::<_, i64>(9)?,
            r.get::<_, i64>(10)?,
            r.get::<_, Option<i64>>(11)?,
        ))
    })?;
    for (v, start, end, corr) in rows {
        let tr = t.track(v[0]);
        if tr.process.is_some_and(|p| p != process) {
            continue;
        }
        let mut m = record(start, end, corr, tr.tid);
        m.insert(
            "dispatch_info".into(),
            json!({"agent_id": {"handle": tr.agent.unwrap_or(0)}, "queue_id": {"handle": tr.queue.unwrap_or(0)},
                "kernel_id": v[1], "dispatch_id": v[2],
                "workgroup_size": {"x": v[3], "y": v[4], "z": v[5]},
                "grid_size": {"x": v[6], "y": v[7], "z": v[8]}}),
        );
        rec.lists
            .entry("kernel_dispatch")
            .or_default()
            .push(Value::Object(m));
    }
    Ok(())
}

/// Memory copies, with their agents and sizes.
fn copies(
    db: &Connection,
    s: &str,
    t: &Tables,
    process: i64,
    rec: &mut Records,
) -> rusqlite::Result<()> {
    if !table_exists(db, &format!("rocpd_memory_copy{s}")) {
        return Ok(());
    }
    let sql = timed(
        s,
        "rocpd_memory_copy",
        "x.track_id, x.name_id, x.dst_agent_id, x.src_agent_id, x.size",
    );
    for (track, name, dst, src, size, start, end, corr) in query(db, &sql, [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, Option<i64>>(1)?,
            r.get::<_, Option<i64>>(2)?,
            r.get::<_, Option<i64>>(3)?,
            r.get::<_, Option<i64>>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, i64>(6)?,
            r.get::<_, Option<i64>>(7)?,
        ))
    })? {
        let tr = t.track(track);
        if tr.process.is_some_and(|p| p != process) {
            continue;
        }
        let (kind, op) = rec.op("MEMORY_COPY", &t.text(name));
        let mut m = record(start, end, corr, tr.tid);
        m.insert("kind".into(), json!(kind));
        m.insert("operation".into(), json!(op));
        m.insert("dst_agent_id".into(), json!({"handle": dst.unwrap_or(0)}));
        m.insert("src_agent_id".into(), json!({"handle": src.unwrap_or(0)}));
        m.insert("bytes".into(), json!(size.unwrap_or(0)));
        rec.lists
            .entry("memory_copy")
            .or_default()
            .push(Value::Object(m));
    }
    Ok(())
}

/// Memory allocations (`rocpd_memory_allocate`) as rocprofv3's JSON
/// `memory_allocation` records, for the core's running sums: the
/// operation from its type and level (ALLOC / FREE of REAL / VIRTUAL
/// memory; scratch, REALLOC and RECLAIM rows keep names the core counts
/// and passes over), the agent its own column names or else its track's,
/// times through `start_id` / `end_id` or in `start` / `end` columns
/// (both layouts are attested).
fn allocations(
    db: &Connection,
    s: &str,
    t: &Tables,
    process: i64,
    rec: &mut Records,
) -> rusqlite::Result<()> {
    let table = format!("rocpd_memory_allocate{s}");
    if !table_exists(db, &table) {
        return Ok(());
    }
    let cols = columns(db, &table)?;
    let has = |c: &str| cols.iter().any(|x| x == c);
    let col = |c: &str| {
        if has(c) {
            format!("x.{c}")
        } else {
            "NULL".into()
        }
    };
    let picked = format!(
        "{}, {}, {}, {}, {}, {}",
        col("track_id"),
        col("type"),
        col("level"),
        col("address"),
        col("size"),
        col("agent_id"),
    );
    let sql = if has("start_id") {
        timed(s, "rocpd_memory_allocate", &picked)
    } else {
        format!(
            "SELECT {picked}, x.start, x.\"end\", e.correlation_id, e.category_id FROM \"{table}\" x \
             LEFT JOIN \"rocpd_event{s}\" e ON e.id = x.event_id"
        )
    };
    type Row = (
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<i64>,
        Option<i64>,
    );
    let rows = query(db, &sql, [], |r| {
        let row: Row = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        let agent: Option<i64> = r.get(5)?;
        let times: (i64, i64, Option<i64>) = (r.get(6)?, r.get(7)?, r.get(8)?);
        Ok((row, agent, times))
    })?;
    for ((track, ty, level, address, size), agent, (start, end, corr)) in rows {
        let tr = track.map(|k| t.track(k)).unwrap_or_default();
        if tr.process.is_some_and(|p| p != process) {
            continue;
        }
        let (ty, level) = (ty.unwrap_or_default(), level.unwrap_or_default());
        let name = match (ty.as_str(), level.as_str()) {
            ("ALLOC", "REAL") => "MEMORY_ALLOCATION_ALLOCATE".to_string(),
            ("ALLOC", "VIRTUAL") => "MEMORY_ALLOCATION_VMEM_ALLOCATE".to_string(),
            ("FREE", "REAL") => "MEMORY_ALLOCATION_FREE".to_string(),
            ("FREE", "VIRTUAL") => "MEMORY_ALLOCATION_VMEM_FREE".to_string(),
            (ty, level) => format!("MEMORY_ALLOCATION_{ty}_{level}"),
        };
        let (kind, op) = rec.op("MEMORY_ALLOCATION", &name);
        let mut m = record(start, end, corr, tr.tid);
        m.insert("kind".into(), json!(kind));
        m.insert("operation".into(), json!(op));
        if let Some(agent) = agent.or(tr.agent) {
            m.insert("agent_id".into(), json!({ "handle": agent }));
        }
        m.insert("address".into(), json!(address.unwrap_or(0) as u64));
        m.insert("allocation_size".into(), json!(size.unwrap_or(0)));
        rec.lists
            .entry("memory_allocation")
            .or_default()
            .push(Value::Object(m));
    }
    Ok(())
}

/// A table's column names.
fn columns(db: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    query(db, "SELECT name FROM pragma_table_info(?1)", [table], |r| {
        r.get::<_, String>(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        format!(
            "{}/../../tests/fixtures/rocprof/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[test]
    fn a_databases_allocations_give_the_series_its_json_gives() {
        // The allocation run as rocprofv3's JSON and as its rocpd
        // database (tools/make_rocpd_fixture.py): the same counter
        // samples — both sums, every agent — and the same passed over.
        let db = to_rocprof_json(&fixture("memory_allocation.rocpd.db")).unwrap();
        let json = std::fs::read(fixture("memory_allocation.json")).unwrap();
        let opts = tracelane_core::ImportOptions::default();
        let (a, b) = (
            tracelane_core::import_bytes(&db, opts).unwrap(),
            tracelane_core::import_bytes(&json, opts).unwrap(),
        );
        let samples = |t: &tracelane_core::Trace| {
            let c = &t.counters;
            let mut v: Vec<(String, String, i64, u64)> = (0..c.ts_ns.len())
                .map(|k| {
                    let p = &t.processes[c.process[k].0 as usize];
                    let label = p
                        .labels
                        .map_or("host".to_string(), |l| t.str(l).to_string());
                    (
                        label,
                        t.str(c.series[k]).to_string(),
                        c.ts_ns[k],
                        c.value[k] as u64,
                    )
                })
                .collect();
            v.sort();
            v
        };
        let want = samples(&b);
        assert_eq!(want.len(), 40);
        assert_eq!(samples(&a), want);
        for t in [&a, &b] {
            assert_eq!(t.diagnostics.warning_count("rocprof_memory_passed_over"), 3);
        }
    }
}
