//! An HLO shape and its sizes as XLA's cost analysis measures them
//! (`ShapeUtil::ByteSizeOf` with the default 8-byte pointer size,
//! `HloCostAnalysis::GetShapeSize`: 0 for a shape without a layout).

/// An array (element type, dimensions) or a tuple of shapes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// `xla.PrimitiveType` number.
    pub element_type: i32,
    pub dims: Vec<i64>,
    pub tuple: Vec<Shape>,
    pub layout: Option<Layout>,
}

/// The parts of an array's layout the sizes read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub element_size_in_bits: i64,
    pub memory_space: i64,
}

/// `PrimitiveType::TUPLE`.
const TUPLE: i32 = 13;
/// `ShapeUtil::ByteSizeOf`'s default pointer size.
const POINTER_SIZE: i64 = 8;

impl Shape {
    pub fn is_tuple(&self) -> bool {
        self.element_type == TUPLE
    }

    pub fn is_array(&self) -> bool {
        !self.is_tuple() && !matches!(self.element_type, 0 | 14 | 17)
    }

    /// `ShapeUtil::ElementsIn` (an array's; 1 for a scalar).
    pub fn elements(&self) -> i64 {
        self.dims
            .iter()
            .fold(1i64, |n, &d| n.saturating_mul(d.max(0)))
    }

    /// `ShapeUtil::ElementsInRecursive`: a tuple's leaves summed.
    pub fn elements_recursive(&self) -> i64 {
        if self.is_tuple() {
            self.tuple
                .iter()
                .fold(0i64, |n, s| n.saturating_add(s.elements_recursive()))
        } else {
            self.elements()
        }
    }

    /// `LayoutUtil::HasLayout`: an array's own, every leaf's for a tuple.
    pub fn has_layout(&self) -> bool {
        if self.is_tuple() {
            self.tuple.iter().all(Shape::has_layout)
        } else {
            self.layout.is_some() || !self.is_array()
        }
    }

    /// `ShapeUtil::ByteSizeOf(shape, 8)`: a tuple is its pointer table.
    pub fn byte_size(&self) -> i64 {
        if self.is_tuple() {
            return POINTER_SIZE.saturating_mul(self.tuple.len() as i64);
        }
        if !self.is_array() {
            return 0;
        }
        match self.layout {
            Some(l) if l.element_size_in_bits > 0 => {
                let bits = self.elements().saturating_mul(l.element_size_in_bits);
                bits.saturating_add(7) / 8
            }
            _ => self
                .elements()
                .saturating_mul(element_bytes(self.element_type)),
        }
    }

    /// `HloCostAnalysis::GetShapeSize`: 0 without a layout.
    pub fn cost_size(&self) -> i64 {
        if self.has_layout() {
            self.byte_size()
        } else {
            0
        }
    }

    /// The memory space of an array's layout (`None` without one).
    pub fn memory_space(&self) -> Option<i64> {
        self.layout.map(|l| l.memory_space)
    }
}

/// `ShapeUtil::ByteSizeOfPrimitiveType` by `xla.PrimitiveType` number
/// (sub-byte types take a byte unless the layout packs them).
fn element_bytes(t: i32) -> i64 {
    match t {
        1 | 2 | 6 => 1,       // PRED, S8, U8
        3 | 7 | 10 | 16 => 2, // S16, U16, F16, BF16
        4 | 8 | 11 => 4,      // S32, U32, F32
        5 | 9 | 12 | 15 => 8, // S64, U64, F64, C64
        18 => 16,             // C128
        19..=33 => 1,         // the F8 / F4 / S4 / U4 / S2 / U2 families
        _ => 0,               // invalid, opaque, token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(t: i32, dims: &[i64]) -> Shape {
        Shape {
            element_type: t,
            dims: dims.to_vec(),
            tuple: Vec::new(),
            layout: Some(Layout::default()),
        }
    }

    #[test]
    fn sizes_follow_shape_util() {
        let bf16 = array(16, &[1, 5120, 34, 31, 53]);
        assert_eq!(bf16.byte_size(), 572_026_880);
        let t = Shape {
            element_type: TUPLE,
            tuple: vec![bf16.clone(), array(6, &[7_150_336])],
            ..Shape::default()
        };
        assert_eq!(t.byte_size(), 16);
        assert_eq!(t.elements_recursive(), 286_013_440 + 7_150_336);
        let no_layout = Shape {
            layout: None,
            ..bf16
        };
        assert_eq!(no_layout.cost_size(), 0);
        let packed = Shape {
            layout: Some(Layout {
                element_size_in_bits: 4,
                memory_space: 0,
            }),
            ..array(21, &[3])
        };
        assert_eq!(packed.byte_size(), 2);
    }
}
