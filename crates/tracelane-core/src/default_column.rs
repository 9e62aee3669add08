//! [`DefaultColumn`]: a model column that stores nothing while every row
//! holds its default.
//!
//! Most of a slice's columns are what one format fills and the others leave
//! at "absent": PyTorch's external ids, sequence numbers and input shapes,
//! a JSON file's byte ranges, a GPU's streams and correlation ids. An
//! XPlane or Perfetto trace of millions of rows held eleven such columns
//! full of `NONE_I64` — 92 of a row's 141 bytes, memory the import wrote
//! and the kernel faulted in for nothing (and a third of the page's wasm
//! memory). A column here allocates on its first non-default row, then
//! holds every row as a plain `Vec` does.

use std::ops::Index;

/// A column whose rows are all `default` until one is not; from then on
/// one value per row.
#[derive(Clone)]
pub struct DefaultColumn<T> {
    default: T,
    len: usize,
    /// Empty while every row holds `default`; else one value per row.
    values: Vec<T>,
    /// Rows reserved for while none was stored: the capacity the column
    /// takes when it starts storing (a file's estimated row count).
    reserved: usize,
}

impl<T: Copy + PartialEq> DefaultColumn<T> {
    /// An empty column whose absent rows read `default`.
    pub const fn new(default: T) -> Self {
        DefaultColumn {
            default,
            len: 0,
            values: Vec::new(),
            reserved: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Row `i`'s value, `None` past the end.
    pub fn get(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| self.at(i))
    }

    fn at(&self, i: usize) -> T {
        if self.values.is_empty() {
            self.default
        } else {
            self.values[i]
        }
    }

    pub fn push(&mut self, v: T) {
        if self.values.is_empty() && v == self.default {
            self.len += 1;
            return;
        }
        self.store();
        self.values.push(v);
        self.len += 1;
    }

    /// Sets row `i` (panics past the end, as a slice does).
    pub fn set(&mut self, i: usize, v: T) {
        assert!(i < self.len, "row {i} of a column of {}", self.len);
        if self.values.is_empty() && v == self.default {
            return;
        }
        self.store();
        self.values[i] = v;
    }

    /// Room for `n` more rows; while every row is the default, noted and
    /// allocated only if the column starts storing.
    pub fn reserve(&mut self, n: usize) {
        if self.values.is_empty() {
            self.reserved = self.reserved.max(self.len.saturating_add(n));
        } else {
            self.values.reserve(n);
        }
    }

    /// [`Self::reserve`], exactly.
    pub fn reserve_exact(&mut self, n: usize) {
        if self.values.is_empty() {
            self.reserved = self.reserved.max(self.len.saturating_add(n));
        } else {
            self.values.reserve_exact(n);
        }
    }

    pub fn shrink_to_fit(&mut self) {
        self.reserved = 0;
        self.values.shrink_to_fit();
    }

    /// Every row in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = T> + '_ {
        (0..self.len).map(|i| self.at(i))
    }

    /// The stored rows, `None` while every row is the default (a
    /// permutation or an in-place pass then has nothing to do).
    pub fn stored_mut(&mut self) -> Option<&mut [T]> {
        (!self.values.is_empty()).then_some(self.values.as_mut_slice())
    }

    /// Bytes its stored rows take (as the model counts its other columns:
    /// rows, not spare capacity).
    pub fn heap_bytes(&self) -> usize {
        self.values.len() * std::mem::size_of::<T>()
    }

    /// Appends `other`'s rows, each mapped by `f` (an id into this trace's
    /// numbering), and frees `other`.
    pub fn append_mapped(&mut self, other: DefaultColumn<T>, f: impl Fn(T) -> T) {
        self.extend_mapped(&other, f);
    }

    /// Appends `other`'s rows.
    pub fn append(&mut self, other: DefaultColumn<T>) {
        self.extend_mapped(&other, |v| v);
    }

    /// Appends copies of `other`'s rows, each mapped by `f`; a column of
    /// defaults appends without a pass over its rows.
    pub fn extend_mapped(&mut self, other: &DefaultColumn<T>, f: impl Fn(T) -> T) {
        if other.values.is_empty() {
            let v = f(other.default);
            if !(self.values.is_empty() && v == self.default) {
                self.store();
                self.values.resize(self.len + other.len, v);
            }
            self.len += other.len;
            return;
        }
        self.store();
        self.values.extend(other.values.iter().map(|&v| f(v)));
        self.len += other.len;
    }

    /// Writes out every row so far: the first non-default value arrived.
    fn store(&mut self) {
        if self.values.is_empty() {
            // With room for the current row and those reserved for.
            let mut v = Vec::with_capacity(self.reserved.max(self.len + 1));
            v.resize(self.len, self.default);
            self.values = v;
        }
    }
}

impl<T: Copy + PartialEq> Extend<T> for DefaultColumn<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, rows: I) {
        for v in rows {
            self.push(v);
        }
    }
}

/// Its rows, as a `Vec` of them shows (how it stores them is not its value).
impl<T: Copy + PartialEq + std::fmt::Debug> std::fmt::Debug for DefaultColumn<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Equal when every row is: a column stored with all rows the default
/// equals one that stores nothing.
impl<T: Copy + PartialEq> PartialEq for DefaultColumn<T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Copy + PartialEq> Index<usize> for DefaultColumn<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "row {i} of a column of {}", self.len);
        if self.values.is_empty() {
            &self.default
        } else {
            &self.values[i]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DefaultColumn;

    #[test]
    fn a_column_of_defaults_stores_nothing_and_reads_them() {
        let mut c = DefaultColumn::new(-1i64);
        c.extend([-1, -1, -1]);
        c.reserve(1 << 20);
        assert_eq!((c.len(), c.heap_bytes(), c[2]), (3, 0, -1));
        assert_eq!(c.iter().collect::<Vec<_>>(), [-1, -1, -1]);
        assert!(c.stored_mut().is_none());
    }

    #[test]
    fn the_first_other_value_stores_every_row_before_it() {
        let mut c = DefaultColumn::new(-1i64);
        c.extend([-1, -1]);
        c.push(7);
        c.push(-1);
        c.set(0, 5);
        assert_eq!(c.iter().collect::<Vec<_>>(), [5, -1, 7, -1]);
        assert_eq!((c.get(3), c.get(4)), (Some(-1), None));
    }

    #[test]
    fn setting_a_default_row_to_the_default_stores_nothing() {
        let mut c = DefaultColumn::new(0u32);
        c.extend([0, 0]);
        c.set(1, 0);
        assert_eq!(c.heap_bytes(), 0);
    }

    #[test]
    #[should_panic]
    fn reading_past_the_end_panics_as_a_slice_does() {
        let mut c = DefaultColumn::new(0u32);
        c.push(0);
        let _ = c[1];
    }
}
