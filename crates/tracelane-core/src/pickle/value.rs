//! What the pickle decoder builds: plain data only — no Python object is
//! ever made, no code ever runs. Containers are shared (`Rc`) as the
//! pickle's memo shares them, so a stack frame written once and referred to
//! a million times is one object; strings are interned ([`StrId`]).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::ids::StrId;

/// A decoded value. A 4-byte tag keeps every payload aligned: with the
/// default 1-byte tag, copying a value (each memo reference is a copy)
/// moved its bytes at odd offsets and stalled on store forwarding —
/// measured: a quarter of the decoding time.
#[derive(Clone, Debug)]
#[repr(u32)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer in `2^63 .. 2^64` (a 9-byte `LONG1`: unsigned 64-bit
    /// values such as stream handles).
    UInt(u64),
    /// An integer beyond 64 bits: its magnitude is not kept.
    BigInt,
    Float(f64),
    Str(StrId),
    /// Bytes (`bytes` / `bytearray`): only their length is kept.
    Bytes(u64),
    List(Rc<List>),
    Tuple(Rc<Tuple>),
    Dict(Rc<Dict>),
    /// One of the few named functions a data pickle may call ([`Global`]).
    Global(Global),
    /// What a [`super::Sink`] put in place of a container it consumed:
    /// `kind` is the sink's, `id` its row.
    Handle(u8, u32),
}

/// The named callables accepted: each rebuilds plain data and nothing else
/// (TorchScript's pickler writes them around lists and dicts; Python writes
/// `OrderedDict`). Any other name is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Global {
    /// `torch.jit._pickle.restore_type_tag(value, type)` and the
    /// `build_*list(data)` family: the first argument unchanged.
    FirstArgument,
    /// `collections.OrderedDict()`: an empty dict.
    OrderedDict,
}

/// A memo slot no container holds.
pub const NO_MEMO: u32 = u32::MAX;

/// A list (also a set: its order kept).
#[derive(Debug)]
pub struct List {
    pub items: RefCell<Items>,
    pub(super) memo: Cell<u32>,
    pub(super) depth: Cell<u32>,
    /// Free for a sink to remember what it made of this list (a stack's
    /// id), so a list shared many times is read once; `u32::MAX` unset.
    pub tag: Cell<u32>,
}

/// A list's items: values, or a run of consecutive handles of one kind
/// (how a sink keeps a list of a million consumed dicts in 12 bytes).
#[derive(Debug)]
pub enum Items {
    Values(Vec<Value>),
    Handles { kind: u8, start: u32, end: u32 },
}

#[derive(Debug)]
pub struct Tuple {
    pub items: Box<[Value]>,
    pub(super) depth: u32,
}

#[derive(Debug)]
pub struct Dict {
    pub items: RefCell<Vec<(Value, Value)>>,
    pub(super) memo: Cell<u32>,
    pub(super) depth: Cell<u32>,
}

impl List {
    pub(super) fn new() -> List {
        List {
            items: RefCell::new(Items::Values(Vec::new())),
            memo: Cell::new(NO_MEMO),
            depth: Cell::new(1),
            tag: Cell::new(u32::MAX),
        }
    }

    /// Appends, keeping a run of consecutive handles compact.
    /// Returns how deeply containers nest in the values added.
    pub(super) fn extend(&self, values: impl ExactSizeIterator<Item = Value>) -> u32 {
        let mut items = self.items.borrow_mut();
        let mut left = values.len();
        let mut depth = 0;
        for v in values {
            left -= 1;
            depth = depth.max(v.depth());
            push(&mut items, v, left);
        }
        depth
    }

    pub fn len(&self) -> usize {
        match &*self.items.borrow() {
            Items::Values(v) => v.len(),
            Items::Handles { start, end, .. } => (end - start) as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items as values (a handle run spelled out).
    pub fn values(&self) -> Vec<Value> {
        match &*self.items.borrow() {
            Items::Values(v) => v.clone(),
            Items::Handles { kind, start, end } => {
                (*start..*end).map(|i| Value::Handle(*kind, i)).collect()
            }
        }
    }
}

/// Appends `v`; `more` values follow it (room is made for them).
fn push(items: &mut Items, v: Value, more: usize) {
    match (&mut *items, &v) {
        (Items::Values(vals), Value::Handle(kind, id)) if vals.is_empty() => {
            *items = Items::Handles {
                kind: *kind,
                start: *id,
                end: id + 1,
            };
        }
        (Items::Handles { kind, end, .. }, Value::Handle(k, id)) if k == kind && id == end => {
            *end += 1;
        }
        (Items::Handles { kind, start, end }, _) => {
            let mut vals = Vec::with_capacity((*end - *start) as usize + 1 + more);
            vals.extend((*start..*end).map(|i| Value::Handle(*kind, i)));
            vals.push(v);
            *items = Items::Values(vals);
        }
        (Items::Values(vals), _) => {
            vals.reserve(1 + more);
            vals.push(v)
        }
    }
}

impl Dict {
    pub(super) fn new() -> Dict {
        Dict {
            items: RefCell::new(Vec::new()),
            memo: Cell::new(NO_MEMO),
            depth: Cell::new(1),
        }
    }
}

impl Value {
    /// How deeply containers nest inside this value (0 for a scalar).
    pub(super) fn depth(&self) -> u32 {
        match self {
            Value::List(l) => l.depth.get(),
            Value::Dict(d) => d.depth.get(),
            Value::Tuple(t) => t.depth,
            _ => 0,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Value::Int(v) => Some(v),
            Value::Bool(b) => Some(b as i64),
            _ => None,
        }
    }

    /// A non-negative integer as `u64` (addresses, sizes).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(v) if v >= 0 => Some(v as u64),
            Value::UInt(v) => Some(v),
            Value::Bool(b) => Some(b as u64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(v) => Some(v as f64),
            Value::UInt(v) => Some(v as f64),
            Value::Float(v) => Some(v),
            Value::Bool(b) => Some(b as u8 as f64),
            _ => None,
        }
    }

    pub fn as_str_id(&self) -> Option<StrId> {
        match *self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&Rc<List>> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&Rc<Dict>> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// Same object (containers) or equal scalars.
    pub(super) fn same(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::List(a), Value::List(b)) => Rc::ptr_eq(a, b),
            (Value::Dict(a), Value::Dict(b)) => Rc::ptr_eq(a, b),
            (Value::Tuple(a), Value::Tuple(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}
