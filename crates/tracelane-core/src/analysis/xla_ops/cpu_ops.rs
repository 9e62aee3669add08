//! The HLO ops XLA:CPU runs on host threads: TraceMe events with an
//! `hlo_op` stat of an embedded module (`ynn_fusion`, `dot.1`), one
//! occurrence each. A large CPU profile holds millions of them running a
//! few hundred ops: each event's stats are read from its packed args (the
//! JSON written and parsed only where those cannot say), each distinct
//! (op, program, module) resolved once, and nothing allocated per event.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::device_ops::framework_op;
use crate::model::{ArgsKey, Trace};
use crate::packed_args::Stat;

/// The ops XLA:CPU ran on host threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuOps {
    /// Each op once: its HLO op and its framework op (the instruction's
    /// name stack, empty when it records none).
    pub ops: Vec<(String, String)>,
    /// Each event running one, in slice order: (slice, index in `ops`).
    pub events: Vec<(u32, u32)>,
}

/// An event's op as its stats name it: HLO op, program id, module.
type Named<'a> = (Cow<'a, str>, Option<i64>, Cow<'a, str>);

/// The ops of XLA:CPU's events in `t` (none for a trace without XLA
/// modules).
pub fn cpu_ops(t: &Trace) -> CpuOps {
    let mut out = CpuOps::default();
    let Some(xla) = t.xla.as_deref() else {
        return out;
    };
    let keys = OpKeys::of(t);
    // (op, program, module) by hash -> what it resolved to: an index in
    // `out.ops`, or `None` where no module defines it.
    type Seen = Vec<(String, Option<i64>, String, Option<u32>)>;
    let mut seen: FxHashMap<u64, Seen> = FxHashMap::default();
    let mut index: FxHashMap<(String, String), u32> = FxHashMap::default();
    for i in 0..t.slices.len() {
        if !t.on_host(i) {
            continue;
        }
        let Some((hlo, program, module)) = keys.read(t, i) else {
            continue;
        };
        // `hlo_op` may list nested ops, outermost first.
        let hlo = hlo.rsplit("::").next().unwrap_or(&hlo);
        let mut h = FxHasher::default();
        (hlo, program, &*module).hash(&mut h);
        let bucket = seen.entry(h.finish()).or_default();
        let known = bucket
            .iter()
            .find(|e| e.0 == hlo && e.1 == program && e.2 == *module)
            .map(|e| e.3);
        let op = known.unwrap_or_else(|| {
            // XLA:CPU's runtime program ids are not the metadata plane's
            // (jax 0.10 on CPU: 34 against 1..16): then by the module's
            // name.
            let instruction = program
                .and_then(|id| xla.instruction(id, hlo))
                .or_else(|| xla.instruction(xla.program_of(&module)?, hlo));
            let op = instruction.map(|ins| {
                let named = (hlo.to_string(), framework_op(&ins.provenance));
                *index.entry(named).or_insert_with_key(|named| {
                    out.ops.push(named.clone());
                    out.ops.len() as u32 - 1
                })
            });
            bucket.push((hlo.to_string(), program, module.to_string(), op));
            op
        });
        if let Some(op) = op {
            out.events.push((i as u32, op));
        }
    }
    out
}

/// What names an XLA:CPU op event: its `hlo_op`, `program_id` and
/// `hlo_module` stats.
struct OpKeys {
    hlo_op: ArgsKey,
    program_id: ArgsKey,
    hlo_module: ArgsKey,
}

impl OpKeys {
    fn of(t: &Trace) -> OpKeys {
        OpKeys {
            hlo_op: t.args_key("hlo_op"),
            program_id: t.args_key("program_id"),
            hlo_module: t.args_key("hlo_module"),
        }
    }

    /// Slice `i`'s HLO op (non-empty), program id and module (empty when
    /// it has none).
    fn read<'t>(&self, t: &'t Trace, i: usize) -> Option<Named<'t>> {
        // One scan of the packed entry decides most events: no `hlo_op`.
        let hlo = match t.slice_packed_stat(i, &self.hlo_op) {
            Stat::Missing => return None,
            Stat::Json if !t.slice_args_have(i, &self.hlo_op) => return None,
            Stat::Json => return Self::read_json(t, i),
            hlo => hlo,
        };
        let p = t.tracks[t.slices.track[i].idx()].process;
        let [program, module] =
            [&self.program_id, &self.hlo_module].map(|k| t.slice_packed_stat(i, k));
        if [program, module].iter().any(|s| matches!(s, Stat::Json)) {
            return Self::read_json(t, i);
        }
        let text = |s: Stat<'t>| match s {
            Stat::Value(v) => t.packed_args.value_text(p, v),
            _ => None,
        };
        let hlo = text(hlo).filter(|h| !h.is_empty())?;
        let program = match program {
            Stat::Value(v) => v.as_i64(),
            _ => None,
        };
        Some((hlo, program, text(module).unwrap_or_default()))
    }

    /// The same from the args' JSON.
    fn read_json<'t>(t: &Trace, i: usize) -> Option<Named<'t>> {
        /// The stats read, borrowed from the event's args.
        #[derive(serde::Deserialize)]
        struct Stats<'a> {
            #[serde(borrow)]
            hlo_op: Option<Cow<'a, str>>,
            program_id: Option<i64>,
            #[serde(borrow)]
            hlo_module: Option<Cow<'a, str>>,
        }
        let args = t.slice_args_json(i);
        let stats = serde_json::from_str::<Stats>(&args).ok()?;
        let hlo = stats.hlo_op.filter(|h| !h.is_empty())?.into_owned();
        let module = stats.hlo_module.map(|m| m.into_owned()).unwrap_or_default();
        Some((Cow::Owned(hlo), stats.program_id, Cow::Owned(module)))
    }
}
