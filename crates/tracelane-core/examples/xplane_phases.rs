//! Where XPlane import time goes: the planes read and translated (`push`)
//! and the model's finishing (sort, nest, links), twice; with the size of
//! the args the events' stats became. `TRACELANE_THREADS=1` for one thread,
//! `TRACELANE_TIMING=1` for the halves of a large plane and the phases.
//! With a chunk size in MiB, the bytes are pushed that many at a time
//! with the file's size as the hint, as the page's worker pushes them.
//!   cargo run --release -p tracelane-core --example xplane_phases -- FILE.xplane.pb [CHUNK_MIB]
use tracelane_core::import::{ImportOptions, Importer};

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let chunk = std::env::args()
        .nth(2)
        .map(|mib| mib.parse::<usize>().expect("chunk MiB") << 20);
    let b = std::fs::read(&path).unwrap();
    for _ in 0..2 {
        let t = std::time::Instant::now();
        let mut imp = Importer::new(ImportOptions::default());
        match chunk {
            Some(n) => {
                imp.set_size_hint(b.len() as u64);
                for piece in b.chunks(n.max(1)) {
                    imp.push(piece).unwrap();
                }
            }
            None => imp.push(&b).unwrap(),
        }
        let fed = t.elapsed().as_secs_f64();
        let trace = imp.finish().unwrap();
        let all = t.elapsed().as_secs_f64();
        println!(
            "push {fed:.3}s finish {:.3}s slices {} args {} MB",
            all - fed,
            trace.slices.len(),
            trace.args_arena.len() >> 20
        );
        std::hint::black_box(&trace);
    }
}
