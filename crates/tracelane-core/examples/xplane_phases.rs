//! Where XPlane import time goes: the planes read and translated (`push`)
//! and the model's finishing (sort, nest, links), twice; with the size of
//! the args the events' stats became. `TRACELANE_THREADS=1` for one thread,
//! `TRACELANE_TIMING=1` for the halves of a large plane and the phases.
//!   cargo run --release -p tracelane-core --example xplane_phases -- FILE.xplane.pb
use tracelane_core::import::{ImportOptions, Importer};

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    for _ in 0..2 {
        let t = std::time::Instant::now();
        let mut imp = Importer::new(ImportOptions::default());
        imp.push(&b).unwrap();
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
