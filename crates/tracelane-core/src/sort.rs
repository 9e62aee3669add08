//! Stable and unstable sorts with one copy of the sort per element type.
//!
//! `slice::sort_by` is generic over its comparator, so every call site's
//! closure gets its own copy of the sort (driftsort is a few KB of wasm
//! per copy); with a hundred sites in the analyses, sorting was a fifth of
//! the import worker's code. These take the comparator as `&dyn Fn`, so the
//! sort is compiled once per element type. For reports and analyses; the
//! importers' hot loops keep the std sorts, where the indirect call would
//! cost.

use std::cmp::Ordering;

/// `v.sort_by(cmp)`: stable.
#[inline(never)]
pub fn by<T>(v: &mut [T], cmp: &dyn Fn(&T, &T) -> Ordering) {
    v.sort_by(cmp)
}

/// `v.sort_by_key(key)`: stable.
pub fn by_key<T, K: Ord>(v: &mut [T], key: &dyn Fn(&T) -> K) {
    by(v, &|a, b| key(a).cmp(&key(b)))
}

/// `v.sort_unstable_by_key(key)`.
#[inline(never)]
pub fn unstable_by_key<T, K: Ord>(v: &mut [T], key: &dyn Fn(&T) -> K) {
    let cmp: &dyn Fn(&T, &T) -> Ordering = &|a, b| key(a).cmp(&key(b));
    v.sort_unstable_by(cmp)
}

#[cfg(test)]
mod tests {
    #[test]
    fn by_key_is_stable() {
        let mut v = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')];
        super::by_key(&mut v, &|x| x.0);
        assert_eq!(v, [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
    }

    #[test]
    fn unstable_by_key_orders() {
        let mut v = vec![5, 3, 9, 1];
        super::unstable_by_key(&mut v, &|&x| std::cmp::Reverse(x));
        assert_eq!(v, [9, 5, 3, 1]);
    }
}
