//! Where one-thread import time goes: the event parse (`feed`) and the
//! model's finishing (sort, nest, flows, links), each best of three.
use tracelane_core::import::chrome::ChromeParser;

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    let (mut feed_best, mut finish_best) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let t = std::time::Instant::now();
        let mut p = ChromeParser::new();
        let used = p.feed(&b, true).unwrap();
        let fed = t.elapsed().as_secs_f64();
        let trace = p.finish(&b[used..]).unwrap();
        let all = t.elapsed().as_secs_f64();
        std::hint::black_box(&trace);
        feed_best = feed_best.min(fed);
        finish_best = finish_best.min(all - fed);
    }
    let mb = b.len() as f64 / 1e6;
    println!(
        "feed {feed_best:.3}s ({:.0} MB/s), finish {finish_best:.3}s, total {:.0} MB/s",
        mb / feed_best,
        mb / (feed_best + finish_best)
    );
}
