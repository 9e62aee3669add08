use tracelane_core::analysis::ops::{op_table, op_tables, OpTableOptions};
fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    let t = tracelane_core::import_bytes(&b, Default::default()).unwrap();
    let lap = |what: &str, f: &dyn Fn()| {
        let s = std::time::Instant::now();
        f();
        println!("{what}: {:.3}s", s.elapsed().as_secs_f64());
    };
    lap("op_table by name", &|| {
        std::hint::black_box(op_table(&t, OpTableOptions::default()));
    });
    lap("op_table by shape", &|| {
        std::hint::black_box(op_table(
            &t,
            OpTableOptions {
                by_shape: true,
                range_ns: None,
            },
        ));
    });
    lap("op_tables", &|| {
        std::hint::black_box(op_tables(&t, None));
    });
    lap("info", &|| {
        std::hint::black_box(tracelane_core::analysis::info::info(&t));
    });
    lap("region_names", &|| {
        std::hint::black_box(tracelane_core::analysis::scope::region_names(&t));
    });
    lap("timeline index", &|| {
        std::hint::black_box(tracelane_core::timeline::TimelineIndex::build(&t));
    });
}
