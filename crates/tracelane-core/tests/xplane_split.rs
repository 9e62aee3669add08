//! A large XPlane plane is translated by several threads natively (its
//! events cut into pieces, each appended in order): the model must be the
//! one a single thread builds, whatever the number of pieces. Its own test
//! binary: it sets TRACELANE_THREADS.

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
/// an interned string), ~34 MB: four pieces of 8 MB or more (the cuts
/// fall in both lines, two of them in the second). `broken`: the second
/// line's event of that index does not decode.
fn big_plane(broken: Option<u64>) -> Vec<u8> {
    let mut plane = Vec::new();
    field(2, b"/host:CPU", &mut plane);
    for (line_id, events) in [(1u64, 600_000u64), (2, 1_200_000)] {
        let mut line = Vec::new();
        int(1, line_id, &mut line);
        field(2, format!("thread {line_id}").as_bytes(), &mut line);
        int(3, 1_000 * line_id, &mut line);
        for k in 0..events {
            let mut e = Vec::new();
            if line_id == 2 && broken == Some(k) {
                // Field 1 as a group (wire type 3): not an XEvent.
                e.extend_from_slice(&[1 << 3 | 3, 1]);
            } else {
                int(1, 1 + k % 3, &mut e);
            }
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
fn a_large_plane_translated_by_several_threads_is_the_one_thread_model() {
    let bytes = big_plane(None);
    assert!(bytes.len() > 32 << 20, "{} bytes", bytes.len());
    let one = with_threads("1", &bytes);
    assert_eq!(one.slices.len(), 1_800_000);
    for threads in ["2", "3", "4"] {
        same_model(&with_threads(threads, &bytes), &one);
    }
}

#[test]
fn a_plane_that_breaks_off_in_its_last_piece_keeps_what_one_thread_keeps() {
    // The second line's event 1,000,000 lies in the last of four pieces
    // (the second line is the last two thirds of the plane's bytes).
    let bytes = big_plane(Some(1_000_000));
    let one = with_threads("1", &bytes);
    assert_eq!(one.slices.len(), 1_600_000);
    let said = |t: &Trace| {
        let w = &t.diagnostics.warnings["xplane_bad_plane"];
        (w.count, w.example.clone())
    };
    assert!(
        said(&one).1.contains("after 1600000 events"),
        "{:?}",
        said(&one)
    );
    for threads in ["2", "4"] {
        let many = with_threads(threads, &bytes);
        same_model(&many, &one);
        assert_eq!(said(&many), said(&one));
    }
}

/// The tests of this binary set the variable in turn.
static THREADS_VAR: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn with_threads(threads: &str, bytes: &[u8]) -> Trace {
    let _turn = THREADS_VAR.lock().unwrap_or_else(|e| e.into_inner());
    std::env::set_var("TRACELANE_THREADS", threads);
    let t = import_bytes(bytes, ImportOptions::default()).unwrap();
    std::env::remove_var("TRACELANE_THREADS");
    t
}

fn same_model(many: &Trace, one: &Trace) {
    assert_eq!(rows(many), rows(one));
    assert_eq!(many.slices.file_order, one.slices.file_order);
    assert_eq!(many.tracks.len(), one.tracks.len());
    for (a, b) in many.tracks.iter().zip(&one.tracks) {
        assert_eq!(
            (many.str(a.name.unwrap()), &a.slices),
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
    assert_eq!(warnings(many), warnings(one));
    assert_eq!(
        many.slice_args_json(1),
        r#"{"group_id":1,"_src":"thunk_executor.cc"}"#
    );
}
