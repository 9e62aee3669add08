//! `tracelane`: the core's numbers in a terminal.
//!
//! ```text
//! tracelane ops FILE [--by-shape] [--sort KEY] [--top N] [--format table|csv|json|md]
//! tracelane info FILE [--format text|json]
//! tracelane compare FILE... [--region NAME]... [--format table|md|json]
//! tracelane analyze FILE [--scope whole|steps|region:NAME|occurrences:NAME] [--hta [--hta-version 0.6|0.5]] [--format table|md|json]
//! tracelane roofline FILE [--scope …] [--peak-tflops X --peak-gbps Y] [--format table|md|json]
//! tracelane engines DIR_OR_FILE [--scope …] [--format table|md|json]
//! tracelane ranks DIR_OR_FILES... [--top N] [--format table|md|json]
//! tracelane insights FILE [RAW_MEMORY_TIMELINE|SNAPSHOT] [--scope whole|region:NAME] [--format table|md|json]
//! tracelane insights --baseline BASE CANDIDATE [--fail-on-regression PCT] [--format table|md|json]
//! tracelane diff A B [--step N|--region NAME] [--metric device|host] [--device N] [--format table|md|json]
//! tracelane regions FILE [--format table|md|json]
//! tracelane memory FILE [RAW_MEMORY_TIMELINE|SNAPSHOT] [--at peak|TIME_US] [--top N] [--format table|md|json]
//! tracelane memory BASELINE_SNAPSHOT OTHER_SNAPSHOT [--top N] [--format table|md|json]
//! tracelane export TRACE_OR_DIR... --parquet OUT_DIR [--job NAME]
//! tracelane synth OUT --mb N [--seed S] [--ranks N]
//! tracelane bench FILE...
//! ```

mod args;
mod commands;
mod heap;
mod input;
mod rank_set;
mod rocpd;
mod scopes;

use std::io::Write;
use std::process::ExitCode;

use args::{parse_flags, REGRESSION, USAGE};
use commands::{
    analyze, bench, compare, diff, engines, export, info, insights, memory, ops, ranks, regions,
    roofline, synth,
};

#[global_allocator]
static HEAP: heap::HugePageHeap = heap::HugePageHeap;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) if msg == REGRESSION => ExitCode::from(1),
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "tracelane: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let Some(cmd) = args.first() else {
        return Err(USAGE.to_string());
    };
    let flags = parse_flags(&args[1..])?;
    match cmd.as_str() {
        "ops" => ops::run(&flags),
        "info" => info::run(&flags),
        "compare" => compare::run(&flags),
        "analyze" => analyze::run(&flags),
        "roofline" => roofline::run(&flags),
        "engines" => engines::run(&flags),
        "ranks" => ranks::run(&flags),
        "insights" => insights::run(&flags),
        "regions" => regions::run(&flags),
        "diff" => diff::run(&flags),
        "memory" => memory::run(&flags),
        "export" => export::run(&flags),
        "synth" => synth::run(&flags),
        "bench" => bench::run(&flags),
        "bench-timeline" => bench::timeline(&flags),
        "bench-profile" => bench::profile(&flags),
        "bench-snapshot" => bench::snapshot(&flags),
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}
