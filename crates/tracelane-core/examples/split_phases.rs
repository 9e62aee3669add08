//! Times the browser's two-worker import natively, piece by piece: the
//! first part, the second part, encoding it, and merging it.
use tracelane_core::import::event_boundary;
use tracelane_core::{ImportOptions, Importer};

fn main() {
    let path = std::env::args().nth(1).expect("file");
    let b = std::fs::read(&path).unwrap();
    let opts = ImportOptions::default();
    let mid = b.len() / 100 * 47;
    let cut = mid + event_boundary(&b[mid..]).expect("a boundary");
    let t = std::time::Instant::now();
    let mut first = Importer::new(opts);
    first.set_size_hint(b.len() as u64);
    for c in b[..cut].chunks(16 << 20) {
        first.push(c).unwrap();
    }
    let t1 = t.elapsed().as_secs_f64();
    let bare = first.plain_event_list().expect("plain JSON");
    let mut part = Importer::for_part(opts, bare, cut as u64);
    for c in b[cut..].chunks(16 << 20) {
        part.push(c).unwrap();
    }
    let t2 = t.elapsed().as_secs_f64();
    let encoded = part.finish_part().unwrap();
    let t3 = t.elapsed().as_secs_f64();
    assert!(first.absorb_part(&encoded).unwrap());
    let t4 = t.elapsed().as_secs_f64();
    let trace = first.finish().unwrap();
    let t5 = t.elapsed().as_secs_f64();
    println!(
        "first {:.3}s, part {:.3}s, encode {:.3}s ({} MB), merge {:.3}s, finish {:.3}s; {} slices",
        t1,
        t2 - t1,
        t3 - t2,
        encoded.len() / 1_000_000,
        t4 - t3,
        t5 - t4,
        trace.slices.len()
    );
}
