//! A large XPlane plane is translated by two threads natively (its events
//! cut in two halves, the second appended): the model must be the one a
//! single thread builds. Its own test binary: it sets TRACELANE_THREADS.

use tracelane_core::{import_bytes, ImportOptions, Trace};

fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn field(num: u64, body: &[u8], out: &mut Vec<u8>) {
    varint(num << 3 | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn int(num: u64, v: u64, out: &mut Vec<u8>) {
    varint(num << 3, out);
    varint(v, out);
}

/// `(id, name)` as an XPlane map entry of metadata (`XEventMetadata` and
/// `XStatMetadata` both have `id` = 1, `name` = 2).
fn metadata(map_field: u64, id: u64, name: &str, out: &mut Vec<u8>) {
    let mut m = Vec::new();
    int(1, id, &mut m);
    field(2, name.as_bytes(), &mut m);
    let mut entry = Vec::new();
    int(1, id, &mut entry);
    field(2, &m, &mut entry);
    field(map_field, &entry, out);
}

/// One host plane, two lines of nested events with stats (a number and
/// an interned string), ~17 MB: over the two-thread threshold.
fn big_plane() -> Vec<u8> {
    let mut plane = Vec::new();
    field(2, b"/host:CPU", &mut plane);
    for (line_id, events) in [(1u64, 300_000u64), (2, 600_000)] {
        let mut line = Vec::new();
        int(1, line_id, &mut line);
        field(2, format!("thread {line_id}").as_bytes(), &mut line);
        int(3, 1_000 * line_id, &mut line);
        for k in 0..events {
            let mut e = Vec::new();
            int(1, 1 + k % 3, &mut e);
            // A parent every other event, its child inside it.
            let (offset, dur) = if k % 2 == 0 {
                (k * 1_000_000, 900_000)
            } else {
                ((k - 1) * 1_000_000 + 100_000, 500_000)
            };
            int(2, offset, &mut e);
            int(3, dur, &mut e);
            let mut s = Vec::new();
            int(1, 1, &mut s);
            int(4, k, &mut s);
            field(4, &s, &mut e);
            let mut s = Vec::new();
            int(1, 2, &mut s);
            int(7, 3, &mut s);
            field(4, &s, &mut e);
            field(4, &e, &mut line);
        }
        field(3, &line, &mut plane);
    }
    for (id, name) in [(1, "Outer::Run"), (2, "inner_op"), (3, "$main.py:3 f")] {
        metadata(4, id, name, &mut plane);
    }
    for (id, name) in [(1, "group_id"), (2, "_src"), (3, "thunk_executor.cc")] {
        metadata(5, id, name, &mut plane);
    }
    let mut space = Vec::new();
    field(1, &plane, &mut space);
    space
}

fn rows(t: &Trace) -> Vec<(i64, i64, String, String, u32)> {
    (0..t.slices.len())
        .map(|i| {
            (
                t.slices.start_ns[i],
                t.slices.dur_ns[i],
                t.slice_name(i).to_string(),
                t.slice_args_json(i).to_string(),
                t.slices.depth[i] as u32,
            )
        })
        .collect()
}

#[test]
fn a_large_plane_translated_by_two_threads_is_the_one_thread_model() {
    let bytes = big_plane();
    assert!(bytes.len() > 16 << 20, "{} bytes", bytes.len());
    let two = import_bytes(&bytes, ImportOptions::default()).unwrap();
    std::env::set_var("TRACELANE_THREADS", "1");
    let one = import_bytes(&bytes, ImportOptions::default()).unwrap();
    std::env::remove_var("TRACELANE_THREADS");
    assert_eq!(one.slices.len(), 900_000);
    assert_eq!(rows(&two), rows(&one));
    assert_eq!(two.slices.file_order, one.slices.file_order);
    assert_eq!(two.tracks.len(), one.tracks.len());
    for (a, b) in two.tracks.iter().zip(&one.tracks) {
        assert_eq!(
            (two.str(a.name.unwrap()), &a.slices),
            (one.str(b.name.unwrap()), &b.slices)
        );
    }
    let warnings = |t: &Trace| {
        t.diagnostics
            .warnings
            .iter()
            .map(|(k, w)| (k.to_string(), w.count))
            .collect::<Vec<_>>()
    };
    assert_eq!(warnings(&two), warnings(&one));
    assert_eq!(
        two.slice_args_json(1),
        r#"{"group_id":1,"_src":"thunk_executor.cc"}"#
    );
}
