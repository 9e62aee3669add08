//! Placeholder for the tracelane web app (a leptos page built by Trunk).
//! The page itself arrives with the next issue; this binary only proves the
//! app links against the core on every target.

fn main() {
    let demo = br#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mul","pid":1,"tid":1,"ts":0,"dur":1}]}"#;
    match tracelane_core::import_bytes(demo, tracelane_core::ImportOptions::default()) {
        Ok(t) => println!(
            "tracelane app placeholder: demo trace has {} slices",
            t.slices.len()
        ),
        Err(e) => eprintln!("tracelane: {e}"),
    }
}
