//! Decoding speed of an allocator snapshot as the browser's worker reads
//! it (1 MiB chunks pushed to the streaming reader), best of three; built
//! for WASI to time it as wasm in Node (`bench/wasi_import.mjs`).
fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    let mut best = f64::MAX;
    let mut entries = 0;
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let mut r = tracelane_core::memory_snapshot::SnapshotReader::default();
        for chunk in b.chunks(1 << 20) {
            r.push(chunk).unwrap();
        }
        let snap = r.finish().unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        entries = snap.entries.len();
    }
    let mb = b.len() as f64 / 1e6;
    println!(
        "{path}: {mb:.1} MB, {entries} entries, decode {best:.3} s, {:.0} MB/s",
        mb / best
    );
}
