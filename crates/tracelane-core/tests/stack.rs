//! Ranks stacked in one model ([`tracelane_core::stack`]): each rank's
//! slices, links and args where they were, on the epoch clock.

use tracelane_core::ids::TrackIdx;
use tracelane_core::model::{Trace, NO_SLICE};
use tracelane_core::stack::{stack, Part};
use tracelane_core::{import_bytes, ImportOptions};

fn rank(k: usize) -> Trace {
    let path = format!(
        "{}/../../tests/fixtures/synth-ranks/rank{k}.pt.trace.json.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    import_bytes(&std::fs::read(path).unwrap(), ImportOptions::default()).unwrap()
}

#[test]
fn stacked_ranks_keep_each_ranks_slices_links_and_args_on_the_epoch_clock() {
    let (a, b) = (rank(0), rank(2));
    let base = a.clock_offset_ns.min(b.clock_offset_ns);
    let (na, nb) = (a.slices.len(), b.slices.len());
    let s = stack(
        vec![
            Part {
                label: "rank 0".into(),
                trace: a.clone(),
            },
            Part {
                label: "rank 2".into(),
                trace: b.clone(),
            },
        ],
        base,
    );
    assert_eq!(s.slices.len(), na + nb);
    assert_eq!(s.tracks.len(), a.tracks.len() + b.tracks.len());
    // Every slice of rank 2 is where it was, on the epoch clock, with
    // its name, track label, parent, launch and args.
    for k in 0..nb {
        let m = na + k;
        assert_eq!(
            s.slices.start_ns[m] + s.clock_offset_ns,
            b.slices.start_ns[k] + b.clock_offset_ns
        );
        assert_eq!(s.slice_name(m), b.slice_name(k));
        assert_eq!(s.slice_args_json(m), b.slice_args_json(k));
        let (tm, tk) = (s.slices.track[m].idx(), b.slices.track[k].idx());
        assert_eq!(s.track_label(tm), b.track_label(tk));
        assert_eq!(
            s.process_label(s.tracks[tm].process.0 as usize),
            format!(
                "rank 2 · {}",
                b.process_label(b.tracks[tk].process.0 as usize)
            )
        );
        let parent = b.slices.parent[k];
        if parent != NO_SLICE {
            assert_eq!(s.slices.parent[m] as usize, na + parent as usize);
        }
        let launch = b.links.launch[k];
        if launch != NO_SLICE {
            assert_eq!(s.links.launch[m] as usize, na + launch as usize);
        }
    }
    // Tracks still cover their slices.
    for (k, tr) in s.tracks.iter().enumerate() {
        for i in tr.slices.clone() {
            assert_eq!(s.slices.track[i as usize].idx(), k);
        }
    }
    // Host lanes first, rank 0's before rank 2's within each kind.
    let order = s.lane_order();
    let first_device = order
        .iter()
        .position(|t| s.tracks[t.idx()].kind == tracelane_core::model::TrackKind::DeviceStream)
        .unwrap();
    let rank_of = |t: &TrackIdx| s.tracks[t.idx()].process.0 as usize >= a.processes.len();
    assert!(order[..first_device]
        .windows(2)
        .all(|w| rank_of(&w[0]) <= rank_of(&w[1])));
    assert!(order[first_device..]
        .windows(2)
        .all(|w| rank_of(&w[0]) <= rank_of(&w[1])));
    assert!(s.diagnostics.format.starts_with("2 ranks stacked"));
}
