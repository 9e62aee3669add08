//! How fast the structural scanner alone walks a file (the floor for parsing).
fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let end = tracelane_core::import::scan::skip_value(&b, 0, true).unwrap();
        let s = t.elapsed().as_secs_f64();
        println!(
            "skip_value: {end} bytes in {s:.3}s = {:.0} MB/s",
            b.len() as f64 / 1e6 / s
        );
    }
}
