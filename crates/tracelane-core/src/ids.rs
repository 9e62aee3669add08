//! The model's indices and sentinels: interned strings ([`StrId`] into an
//! [`Interner`]), slice / track / process indices, and the values that mean
//! "absent" in its columns. Below the model, so what the model holds (the
//! device profile) can use them without importing the model.

use rustc_hash::FxHashMap;

/// Index into [`Interner`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(pub u32);

/// Index into the model's `Slices` columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SliceIdx(pub u32);

/// Index into the model's `Trace::tracks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrackIdx(pub u32);

/// Index into the model's `Trace::processes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcessIdx(pub u32);

impl SliceIdx {
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}
impl TrackIdx {
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// One string table for names, categories, lane names and shapes.
#[derive(Default, Debug, Clone)]
pub struct Interner {
    strings: Vec<Box<str>>,
    ids: FxHashMap<Box<str>, StrId>,
    bytes: usize,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = StrId(self.strings.len() as u32);
        let boxed: Box<str> = s.into();
        self.bytes += boxed.len();
        self.strings.push(boxed.clone());
        self.ids.insert(boxed, id);
        id
    }
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.ids.get(s).copied()
    }
    pub fn get(&self, id: StrId) -> &str {
        &self.strings[id.0 as usize]
    }
    pub fn len(&self) -> usize {
        self.strings.len()
    }
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
    /// Approximate heap bytes held (both copies of each string plus tables).
    pub fn heap_bytes(&self) -> usize {
        self.bytes * 2 + self.strings.capacity() * 16 + self.ids.capacity() * 24
    }
}

/// Value of `args.stream` / `args.device` etc. when absent.
pub const NONE_I64: i64 = i64::MIN;
/// "No slice" in index columns.
pub const NO_SLICE: u32 = u32::MAX;
/// "No string" in string columns.
pub const NO_STR: StrId = StrId(u32::MAX);
