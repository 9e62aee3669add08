//! The op tables of one file, timed (and alone, for `--toggle-collect`
//! under callgrind).
fn main() {
    let path = std::env::args().nth(1).expect("file");
    let reps: usize = std::env::args()
        .nth(2)
        .map_or(5, |r| r.parse().expect("a count"));
    let b = std::fs::read(&path).unwrap();
    let t = tracelane_core::import_bytes(&b, Default::default()).unwrap();
    drop(b);
    for _ in 0..reps {
        let s = std::time::Instant::now();
        std::hint::black_box(tracelane_core::analysis::ops::op_tables(&t, None));
        eprintln!("op_tables {:.3}s", s.elapsed().as_secs_f64());
    }
}
