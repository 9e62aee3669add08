//! One sequential feed of a file (for instruction counts under callgrind).
use tracelane_core::import::chrome::ChromeParser;

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    let mut p = ChromeParser::new();
    let used = p.feed(&b, true).unwrap();
    let trace = p.finish(&b[used..]).unwrap();
    std::hint::black_box(&trace);
}
