use std::time::Instant;
use tracelane_core::analysis::{critical_path::critical_path, frame::Mode, Scope};
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    let t = tracelane_core::import_bytes(&bytes, Default::default()).unwrap();
    for mode in [Mode::Exact, Mode::Hta] {
        let t0 = Instant::now();
        let r = critical_path(&t, &Scope::Whole, mode, &|s| {
            t.slice_args_json(s).to_string()
        });
        println!(
            "{mode:?} {:?} {:?}",
            t0.elapsed(),
            r.map(|r| (r.length_ns, r.nodes, r.graph_edges))
        );
    }
}
