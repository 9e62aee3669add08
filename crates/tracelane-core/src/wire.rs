//! The byte encoding of what one build of tracelane hands between its own
//! workers (decoded Parquet tables, a decoded allocator snapshot): lengths
//! and numbers little-endian, strings as length and UTF-8. Both ends are
//! the same build, so there is no versioning; anything unreadable reads as
//! `None`, and a damaged length never allocates more than the input holds.

pub(crate) struct Writer(pub(crate) Vec<u8>);

impl Writer {
    pub(crate) fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    pub(crate) fn opt<T>(&mut self, v: &Option<T>, each: impl FnOnce(&mut Self, &T)) {
        self.u8(v.is_some() as u8);
        if let Some(v) = v {
            each(self, v);
        }
    }
    pub(crate) fn strs(&mut self, v: &[String]) {
        self.u64(v.len() as u64);
        v.iter().for_each(|s| self.str(s));
    }
    pub(crate) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A column of fixed-size numbers: its length, then each value's
    /// little-endian bytes.
    pub(crate) fn column<const N: usize, T: Copy>(
        &mut self,
        v: &[T],
        bytes: impl Fn(T) -> [u8; N],
    ) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * N);
        for &x in v {
            self.0.extend_from_slice(&bytes(x));
        }
    }
}

pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A length that the remaining bytes can hold (each item ≥ `min` bytes):
    /// a damaged length never allocates more than the input.
    pub(crate) fn len(&mut self, min: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(min.max(1))? <= self.0.len()).then_some(n)
    }
    pub(crate) fn str(&mut self) -> Option<String> {
        let n = self.len(1)?;
        String::from_utf8(self.take(n)?.to_vec()).ok()
    }
    pub(crate) fn opt<T>(
        &mut self,
        each: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(each(self)?)),
            _ => None,
        }
    }
    pub(crate) fn strs(&mut self) -> Option<Vec<String>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.str()).collect()
    }
    pub(crate) fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// What [`Writer::column`] wrote.
    pub(crate) fn column<const N: usize, T>(
        &mut self,
        from: impl Fn([u8; N]) -> T,
    ) -> Option<Vec<T>> {
        let n = self.len(N)?;
        let bytes = self.take(n * N)?;
        Some(
            bytes
                .chunks_exact(N)
                .map(|c| from(c.try_into().expect("chunks of N bytes")))
                .collect(),
        )
    }
}
