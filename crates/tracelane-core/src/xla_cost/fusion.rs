//! A fusion's cost (`HloCostAnalysis::HandleFusion` with
//! `GpuHloCostAnalysis`'s utilizations): its FLOPs are its fused
//! instructions' weighted by how much of each the fusion's outputs use;
//! it reads each parameter once, scaled by that use (at most once: xprof
//! does not count repeated reads), and writes each output leaf.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::{Analyzer, Instr, Props, Shape, MAX_DEPTH};

impl Analyzer<'_> {
    pub(super) fn fusion(&self, f: &Instr, p: &mut Props, depth: u32) {
        let Some(comp) = f.called.first().and_then(|c| self.comp_at.get(c)) else {
            p.unmodelled = true;
            return;
        };
        if depth >= MAX_DEPTH {
            p.unmodelled = true;
            return;
        }
        if f.fusion_kind == "kCustom" {
            // A custom fusion holding a gather or scatter is priced as it.
            if let Some(g) = comp
                .instrs
                .iter()
                .find(|i| i.opcode == "gather" || i.opcode == "scatter")
            {
                // Its handler sets the fusion's own operands by number.
                let inner = self.visit(g, depth + 1);
                for (k, &b) in inner.opnd.iter().enumerate().take(p.opnd.len()) {
                    p.opnd[k] = b;
                    p.opnd_util[k] = inner.opnd_util[k];
                }
                p.flops = inner.flops;
                p.bytes = inner.bytes;
                p.out = inner.out;
                p.unmodelled = inner.unmodelled;
                return;
            }
        }
        let mut inner: HashMap<i64, Props> = HashMap::default();
        for i in &comp.instrs {
            let q = self.visit(i, depth + 1);
            if q.unmodelled {
                p.unmodelled = true;
                return;
            }
            inner.insert(i.id, q);
        }
        let root = self
            .instr_at
            .get(&comp.root_id)
            .copied()
            .or(comp.instrs.last());
        let Some(root) = root else {
            return;
        };
        p.bytes = 0.0;
        self.output_bytes(f, root, p);
        let (flops, util) = self.utilizations(&comp.instrs, root, &inner);
        p.flops = flops;
        // Fused parameters by number are the fusion's operands.
        for param in comp.instrs.iter().filter(|i| i.opcode == "parameter") {
            let k = param.parameter_number as usize;
            if k >= p.opnd.len() {
                continue;
            }
            let read = if param.shape.is_tuple() {
                0.0
            } else {
                let u = util.get(&param.id).copied().unwrap_or(0.0).min(1.0);
                (param.shape.cost_size() as f32 * u).round()
            };
            p.opnd[k] = read;
            p.opnd_util[k] = util.get(&param.id).copied().unwrap_or(0.0);
            p.bytes += read;
        }
    }

    /// `FusionProcessOutputBytesAccessed`: each array output (leaf) its
    /// size, or an in-place update's update size.
    fn output_bytes(&self, f: &Instr, root: &Instr, p: &mut Props) {
        let written = |root: &Instr, s: &Shape| -> f32 {
            if root.opcode == "dynamic-update-slice" {
                self.operand_shape(root, 1).map_or(0, Shape::cost_size) as f32
            } else {
                s.cost_size() as f32
            }
        };
        if !f.shape.is_tuple() {
            p.out = written(root, &f.shape);
            p.bytes += p.out;
            return;
        }
        let mut total = 0.0;
        for (k, s) in f.shape.tuple.iter().enumerate() {
            if !s.is_array() {
                continue;
            }
            let leaf_root = if root.opcode == "tuple" {
                self.operand(root, k).unwrap_or(root)
            } else {
                root
            };
            let b = written(leaf_root, s);
            p.out_leaf.push((k, b));
            p.bytes += b;
            total += b;
        }
        p.out = total;
    }

    /// `GpuHloCostAnalysis::FusionCalculateUtilizations`: from the root
    /// (used whole) to the parameters, an elementwise user passes its
    /// use on to its operands; any other user makes its operand a root of
    /// its own, used as much as the user's use times its operand
    /// utilization (rounded up to whole elements). The fusion's FLOPs are
    /// each instruction's times its use.
    fn utilizations(
        &self,
        instrs: &[Instr],
        root: &Instr,
        inner: &HashMap<i64, Props>,
    ) -> (f32, HashMap<i64, f32>) {
        let mut roots_of: HashMap<i64, HashSet<i64>> = HashMap::default();
        let mut root_util: HashMap<i64, f32> = HashMap::default();
        let mut util: HashMap<i64, f32> = HashMap::default();
        root_util.insert(root.id, 1.0);
        roots_of.entry(root.id).or_default().insert(root.id);
        let mut flops = 0f32;
        for i in instrs.iter().rev() {
            let roots: Vec<i64> = roots_of
                .get(&i.id)
                .map(|r| r.iter().copied().collect())
                .unwrap_or_default();
            let u: f32 = roots
                .iter()
                .map(|r| root_util.get(r).copied().unwrap_or(0.0))
                .sum();
            util.insert(i.id, u);
            let props = &inner[&i.id];
            flops += u * props.flops;
            let passes_on = self.passes_use_on(i);
            for (k, &operand) in i.operands.iter().enumerate() {
                if passes_on {
                    roots_of
                        .entry(operand)
                        .or_default()
                        .extend(roots.iter().copied());
                    continue;
                }
                roots_of.entry(operand).or_default().insert(operand);
                let mut cu = u * props.opnd_util.get(k).copied().unwrap_or(1.0);
                let n = self
                    .instr_at
                    .get(&operand)
                    .map_or(0, |o| o.shape.elements_recursive());
                cu = if n == 0 {
                    0.0
                } else {
                    (cu * n as f32).ceil() / n as f32
                };
                *root_util.entry(operand).or_insert(0.0) += cu;
            }
        }
        (flops, util)
    }

    /// Elementwise instructions, bitcasts that keep the dimensions, tuples
    /// and tuple elements hand their use to their operands as it is.
    fn passes_use_on(&self, i: &Instr) -> bool {
        match i.opcode.as_str() {
            "tuple" | "get-tuple-element" => true,
            "bitcast" => self.operand_shape(i, 0).is_some_and(|s| {
                s.dims == i.shape.dims && s.tuple.is_empty() && !i.shape.is_tuple()
            }),
            op => op == "copy" || crate::xla::is_elementwise(op),
        }
    }
}
