//! A streaming decoder of Python pickles that hold plain data (protocols
//! 2–5: what `pickle.dump` writes on Python 3.8–3.14 and what TorchScript's
//! C++ pickler writes): dicts, lists, tuples, sets, strings, numbers.
//!
//! It decodes; it never evaluates. A pickle that names a class or a
//! function is refused, except the few that only rebuild data
//! ([`Global`]). Bytes are pushed in chunks ([`Decoder::push`]); an
//! opcode cut by a chunk's end waits for the next. The memo (`BINPUT` /
//! `MEMOIZE` … `BINGET`) shares objects, so a value written once and
//! referred to many times is decoded once — allocator snapshots refer to
//! each stack frame thousands of times, and a decoder that copies on every
//! reference (serde-pickle's `value_from_slice`, which also refuses such
//! sharing as "recursive structure found") cannot read them.
//!
//! A [`Sink`] sees each dict as soon as it is filled and may consume it —
//! put a compact handle in its place, in the stack and the memo — so a file
//! of millions of small records never holds them as a tree.
//!
//! Opcodes: pickletools' table (CPython `Lib/pickletools.py`); behaviour
//! as `Lib/pickle.py`'s `_Unpickler`.

mod value;

use std::rc::{Rc, Weak};

pub use value::{Dict, Global, Items, List, Tuple, Value, NO_MEMO};

use crate::ids::Interner;

/// Containers nested deeper than this are refused (the tree is dropped
/// recursively; allocator snapshots nest 6 deep).
pub const MAX_DEPTH: u32 = 512;

/// Why a pickle could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickleError {
    /// Byte offset of the opcode in the pickle.
    pub offset: u64,
    pub message: String,
}

impl std::fmt::Display for PickleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (byte {})", self.message, self.offset)
    }
}

/// Sees each dict once it is filled (after `SETITEM(S)` / `DICT`).
pub trait Sink {
    /// Return a value to stand for `dict` from now on (in the stack and the
    /// memo), or `None` to keep it.
    fn dict(&mut self, cx: &mut Context<'_>, dict: &Dict) -> Option<Value>;
}

/// A sink that keeps everything.
pub struct KeepAll;

impl Sink for KeepAll {
    fn dict(&mut self, _: &mut Context<'_>, _: &Dict) -> Option<Value> {
        None
    }
}

/// What a sink may use while it consumes a dict.
pub struct Context<'a> {
    pub strings: &'a Interner,
    memo: &'a mut Vec<Value>,
}

impl Context<'_> {
    pub fn str(&self, v: &Value) -> Option<&str> {
        v.as_str_id().map(|s| self.strings.get(s))
    }

    /// From now on the memo gives `stand_in` for this list (which stays
    /// whole for whoever holds it already).
    pub fn retire_list(&mut self, list: &Rc<List>, stand_in: Value) {
        let slot = list.memo.get();
        if let Some(v) = self.memo.get_mut(slot as usize) {
            if let Value::List(l) = v {
                if Rc::ptr_eq(l, list) {
                    *v = stand_in;
                }
            }
        }
    }
}

/// The streaming decoder.
pub struct Decoder {
    pub strings: Interner,
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: Vec<Value>,
    /// Bytes of an opcode cut by the end of the last chunk.
    held: Vec<u8>,
    /// Offset in the pickle of the first byte not yet decoded.
    offset: u64,
    protocol: u8,
    done: Option<Value>,
    /// Bytes after `STOP`.
    pub trailing: u64,
    /// Dicts a sink consumed, emptied for reuse: a snapshot is millions of
    /// small dicts, and allocating each (and its items) anew was a tenth
    /// of the decoding time (measured).
    spare: Vec<Rc<Dict>>,
    made: Made,
}

/// The lists and dicts that hold another container, held weakly, so that
/// [`Decoder::clear`] can empty the ones a crafted pickle tied in a cycle
/// outside the memo (a list appended to itself through `DUP`, a memo slot
/// written over): the fuzzer found both leaking. Every container of a
/// cycle holds a container; the millions of scalar-only frames and stacks
/// of a snapshot are not tracked. Dead ones are dropped as the decoder goes.
#[derive(Default)]
struct Made {
    lists: Vec<Weak<List>>,
    dicts: Vec<Weak<Dict>>,
    /// How many were alive at the last pruning.
    live: usize,
}

impl Made {
    /// Tracks `l` once (its weak count says whether it is already).
    fn list(&mut self, l: &Rc<List>) {
        if Rc::weak_count(l) == 0 {
            self.lists.push(Rc::downgrade(l));
            self.prune();
        }
    }

    fn dict(&mut self, d: &Rc<Dict>) {
        if Rc::weak_count(d) == 0 {
            self.dicts.push(Rc::downgrade(d));
            self.prune();
        }
    }

    fn prune(&mut self) {
        if self.lists.len() + self.dicts.len() > 2 * self.live.max(1024) {
            self.lists.retain(|w| w.strong_count() > 0);
            self.dicts.retain(|w| w.strong_count() > 0);
            self.live = self.lists.len() + self.dicts.len();
        }
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

/// What one opcode asked for.
enum Step {
    /// Decoded; this many bytes used.
    Used(usize),
    /// The opcode's operands run past the bytes at hand.
    Incomplete,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder {
            strings: Interner::default(),
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Vec::new(),
            held: Vec::new(),
            offset: 0,
            protocol: 0,
            done: None,
            trailing: 0,
            spare: Vec::new(),
            made: Made::default(),
        }
    }

    /// An empty dict (a consumed one reused when there is one).
    fn new_dict(&mut self) -> Value {
        Value::Dict(match self.spare.pop() {
            Some(d) => {
                d.memo.set(NO_MEMO);
                d.depth.set(1);
                d
            }
            None => Rc::new(Dict::new()),
        })
    }

    /// The protocol the pickle declared (0 before its `PROTO`).
    pub fn protocol(&self) -> u8 {
        self.protocol
    }

    /// Bytes decoded so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Whether `STOP` was read.
    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }

    /// The values on the stack (a truncated pickle: what was being built).
    pub fn stack(&self) -> &[Value] {
        &self.stack
    }

    /// Decodes the next chunk.
    pub fn push(&mut self, chunk: &[u8], sink: &mut dyn Sink) -> Result<(), PickleError> {
        if self.done.is_some() {
            self.trailing += chunk.len() as u64;
            return Ok(());
        }
        if self.held.is_empty() {
            let used = self.run(chunk, sink)?;
            self.keep_rest(&chunk[used..]);
            return Ok(());
        }
        let mut buf = std::mem::take(&mut self.held);
        buf.extend_from_slice(chunk);
        let used = self.run(&buf, sink)?;
        buf.drain(..used);
        self.keep_rest(&buf);
        Ok(())
    }

    fn keep_rest(&mut self, rest: &[u8]) {
        if self.done.is_some() {
            self.trailing += rest.len() as u64;
        } else {
            self.held.clear();
            self.held.extend_from_slice(rest);
        }
    }

    /// Ends the input: the pickled value.
    pub fn finish(&mut self) -> Result<Value, PickleError> {
        match self.done.take() {
            Some(v) => Ok(v),
            None => Err(self.err(if self.offset == 0 && self.held.is_empty() {
                "empty".to_string()
            } else {
                "the pickle ends before its STOP opcode: the file is truncated".to_string()
            })),
        }
    }

    /// Empties every list and dict the decoder made that holds another
    /// container (every one a cycle can pass through), so that whatever a
    /// crafted pickle tied in a cycle is freed. The value returned by
    /// `finish` is emptied too: read it first.
    pub fn clear(&mut self) {
        self.memo.clear();
        self.stack.clear();
        for l in self.made.lists.drain(..).filter_map(|w| w.upgrade()) {
            *l.items.borrow_mut() = Items::Values(Vec::new());
        }
        for d in self.made.dicts.drain(..).filter_map(|w| w.upgrade()) {
            d.items.borrow_mut().clear();
        }
    }

    fn err(&self, message: String) -> PickleError {
        PickleError {
            offset: self.offset,
            message,
        }
    }

    /// Decodes whole opcodes of `buf`; returns the bytes used.
    fn run(&mut self, buf: &[u8], sink: &mut dyn Sink) -> Result<usize, PickleError> {
        let mut at = 0;
        while at < buf.len() && self.done.is_none() {
            match self.step(&buf[at..], sink)? {
                Step::Used(n) => {
                    at += n;
                    self.offset += n as u64;
                }
                Step::Incomplete => break,
            }
        }
        Ok(at)
    }

    fn pop(&mut self) -> Result<Value, PickleError> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(self.err("an opcode reads past a MARK".into()));
        }
        self.stack
            .pop()
            .ok_or_else(|| self.err("an opcode reads an empty stack".into()))
    }

    fn top(&self) -> Result<&Value, PickleError> {
        self.stack
            .last()
            .ok_or_else(|| self.err("an opcode reads an empty stack".into()))
    }

    /// The values above the last MARK, taken off the stack with it.
    fn pop_mark(&mut self) -> Result<Vec<Value>, PickleError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.err("an opcode needs a MARK that is not there".into()))?;
        Ok(self.stack.split_off(m.min(self.stack.len())))
    }

    fn push_value(&mut self, v: Value) -> Result<(), PickleError> {
        if v.depth() > MAX_DEPTH {
            return Err(self.err(format!("containers nest deeper than {MAX_DEPTH}")));
        }
        self.stack.push(v);
        Ok(())
    }

    fn memo_put(&mut self, slot: usize) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        if slot > self.memo.len() + (1 << 16) {
            return Err(self.err(format!("a memo slot ({slot}) far past the memo's end")));
        }
        match &v {
            Value::List(l) => l.memo.set(slot as u32),
            Value::Dict(d) => d.memo.set(slot as u32),
            _ => {}
        }
        if slot >= self.memo.len() {
            self.memo.resize(slot + 1, Value::None);
        }
        self.memo[slot] = v;
        Ok(())
    }

    fn memo_get(&mut self, slot: usize) -> Result<(), PickleError> {
        match self.memo.get(slot) {
            Some(v) => {
                let v = v.clone();
                self.stack.push(v);
                Ok(())
            }
            None => Err(self.err(format!("the memo has no slot {slot}"))),
        }
    }

    fn string(&mut self, bytes: &[u8]) -> Value {
        let s = String::from_utf8_lossy(bytes);
        Value::Str(self.strings.intern(&s))
    }

    /// Where the values of an `APPEND(S)` / `SETITEM(S)` start: after the
    /// last MARK (`marked`), or the last `n`; the container lies just below.
    fn items_from(&mut self, marked: bool, n: usize) -> Result<usize, PickleError> {
        let m = if marked {
            self.marks
                .pop()
                .ok_or_else(|| self.err("an opcode needs a MARK that is not there".into()))?
                .min(self.stack.len())
        } else {
            self.stack
                .len()
                .checked_sub(n)
                .ok_or_else(|| self.err("an opcode reads an empty stack".into()))?
        };
        // The container lies below its values, and (for APPEND / SETITEM)
        // above any open MARK.
        let below_mark = !marked && self.marks.last().is_some_and(|&mk| m < mk + 1);
        if m == 0 || below_mark {
            return Err(self.err("an opcode reads past a MARK".into()));
        }
        Ok(m)
    }

    /// Adds the values from stack position `m` to the dict under them, then
    /// lets the sink see it.
    fn set_items(&mut self, m: usize, sink: &mut dyn Sink) -> Result<(), PickleError> {
        let n = self.stack.len() - m;
        if !n.is_multiple_of(2) {
            return Err(self.err("SETITEMS with an odd number of values".into()));
        }
        let Some(Value::Dict(d)) = m.checked_sub(1).and_then(|c| self.stack.get(c)).cloned() else {
            return Err(self.err("SETITEM(S) on something that is not a dict".into()));
        };
        let mut depth = d.depth.get();
        {
            let mut entries = d.items.borrow_mut();
            entries.reserve(n / 2);
            let mut it = self.stack.drain(m..);
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                depth = depth.max(v.depth() + 1).max(k.depth() + 1);
                entries.push((k, v));
            }
        }
        if depth > MAX_DEPTH {
            return Err(self.err(format!("containers nest deeper than {MAX_DEPTH}")));
        }
        d.depth.set(depth);
        if depth > 1 {
            self.made.dict(&d);
        }
        self.consume(&d, sink);
        if Rc::strong_count(&d) == 1 && d.items.borrow().is_empty() && self.spare.len() < 64 {
            self.spare.push(d);
        }
        Ok(())
    }

    fn consume(&mut self, d: &Rc<Dict>, sink: &mut dyn Sink) {
        let mut cx = Context {
            strings: &self.strings,
            memo: &mut self.memo,
        };
        let Some(stand_in) = sink.dict(&mut cx, d) else {
            return;
        };
        let slot = d.memo.get() as usize;
        if let Some(m) = self.memo.get_mut(slot) {
            if m.same(&Value::Dict(d.clone())) {
                *m = stand_in.clone();
            }
        }
        if let Some(top) = self.stack.last_mut() {
            *top = stand_in;
        }
        d.items.borrow_mut().clear();
    }

    /// Adds the values from stack position `m` to the list under them.
    fn append(&mut self, m: usize) -> Result<(), PickleError> {
        let Some(Value::List(l)) = m.checked_sub(1).and_then(|c| self.stack.get(c)).cloned() else {
            return Err(self.err("APPEND(S) on something that is not a list".into()));
        };
        let depth = l.depth.get().max(l.extend(self.stack.drain(m..)) + 1);
        if depth > 1 {
            self.made.list(&l);
        }
        if depth > MAX_DEPTH {
            return Err(self.err(format!("containers nest deeper than {MAX_DEPTH}")));
        }
        l.depth.set(depth);
        Ok(())
    }

    fn tuple(&mut self, items: Vec<Value>) -> Result<(), PickleError> {
        let depth = items.iter().map(|v| v.depth() + 1).max().unwrap_or(1);
        self.push_value(Value::Tuple(Rc::new(Tuple {
            items: items.into_boxed_slice(),
            depth,
        })))
    }

    /// `LIST` / `FROZENSET`: a new list of the values above the last MARK.
    fn list_of_marked(&mut self) -> Result<(), PickleError> {
        let m = self.items_from(true, 0)?;
        self.stack.insert(m, Value::List(Rc::new(List::new())));
        self.append(m + 1)
    }

    fn global(&mut self, module: &str, name: &str) -> Result<(), PickleError> {
        let g = match (module, name) {
            (
                "torch.jit._pickle",
                "restore_type_tag" | "build_intlist" | "build_doublelist" | "build_boollist"
                | "build_genericlist" | "build_intlist_v2",
            ) => Global::FirstArgument,
            ("collections", "OrderedDict") => Global::OrderedDict,
            _ => {
                return Err(self.err(format!(
                    "the pickle calls {module}.{name}: tracelane decodes plain data only \
                     (dicts, lists, strings, numbers) and never runs what a pickle names"
                )))
            }
        };
        self.stack.push(Value::Global(g));
        Ok(())
    }

    fn reduce(&mut self) -> Result<(), PickleError> {
        let args = self.pop()?;
        let f = self.pop()?;
        let Value::Global(g) = f else {
            return Err(self.err("REDUCE calls something that is not a known function".into()));
        };
        let args: Vec<Value> = match args {
            Value::Tuple(t) => t.items.to_vec(),
            _ => return Err(self.err("REDUCE without an argument tuple".into())),
        };
        match g {
            Global::FirstArgument => {
                let v = args
                    .into_iter()
                    .next()
                    .ok_or_else(|| self.err("a rebuild call without its argument".into()))?;
                self.push_value(v)
            }
            Global::OrderedDict => {
                let d = self.new_dict();
                self.stack.push(d);
                Ok(())
            }
        }
    }

    /// One opcode at the start of `b`.
    fn step(&mut self, b: &[u8], sink: &mut dyn Sink) -> Result<Step, PickleError> {
        macro_rules! need {
            ($n:expr) => {
                if b.len() < $n {
                    return Ok(Step::Incomplete);
                }
            };
        }
        let le = |s: &[u8]| -> u64 {
            let mut v = 0u64;
            for (i, &x) in s.iter().enumerate() {
                v |= (x as u64) << (8 * i);
            }
            v
        };
        let op = b[0];
        let used = match op {
            0x80 => {
                need!(2);
                self.protocol = b[1];
                if !(2..=5).contains(&b[1]) {
                    return Err(self.err(format!(
                        "pickle protocol {} (protocols 2 to 5 are read)",
                        b[1]
                    )));
                }
                2
            }
            0x95 => {
                need!(9);
                9
            }
            b'.' => {
                let v = self.pop()?;
                self.done = Some(v);
                1
            }
            b'(' => {
                self.marks.push(self.stack.len());
                1
            }
            b'0' => {
                self.pop()?;
                1
            }
            b'1' => {
                self.pop_mark()?;
                1
            }
            b'2' => {
                let v = self.top()?.clone();
                self.stack.push(v);
                1
            }
            b'N' => {
                self.stack.push(Value::None);
                1
            }
            0x88 | 0x89 => {
                self.stack.push(Value::Bool(op == 0x88));
                1
            }
            b'J' => {
                need!(5);
                self.stack.push(Value::Int(
                    i32::from_le_bytes([b[1], b[2], b[3], b[4]]) as i64
                ));
                5
            }
            b'K' => {
                need!(2);
                self.stack.push(Value::Int(b[1] as i64));
                2
            }
            b'M' => {
                need!(3);
                self.stack.push(Value::Int(le(&b[1..3]) as i64));
                3
            }
            0x8a | 0x8b => {
                let (head, n) = if op == 0x8a {
                    need!(2);
                    (2, b[1] as usize)
                } else {
                    need!(5);
                    let n = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
                    if n < 0 {
                        return Err(self.err("LONG4 with a negative length".into()));
                    }
                    (5, n as usize)
                };
                need!(head + n);
                let v = long(&b[head..head + n]);
                self.stack.push(v);
                head + n
            }
            b'G' => {
                need!(9);
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[1..9]);
                self.stack.push(Value::Float(f64::from_be_bytes(a)));
                9
            }
            0x8c | b'X' | 0x8d | b'U' | b'T' => {
                let width = match op {
                    0x8c | b'U' => 1,
                    b'X' | b'T' => 4,
                    _ => 8,
                };
                let Some(r) = operand(b, width).map_err(|m| self.err(m.into()))? else {
                    return Ok(Step::Incomplete);
                };
                let v = self.string(&b[r.clone()]);
                self.stack.push(v);
                r.end
            }
            b'C' | b'B' | 0x8e | 0x96 => {
                let width = match op {
                    b'C' => 1,
                    b'B' => 4,
                    _ => 8,
                };
                let Some(r) = operand(b, width).map_err(|m| self.err(m.into()))? else {
                    return Ok(Step::Incomplete);
                };
                self.stack.push(Value::Bytes(r.len() as u64));
                r.end
            }
            b']' => {
                self.stack.push(Value::List(Rc::new(List::new())));
                1
            }
            b'a' => {
                let m = self.items_from(false, 1)?;
                self.append(m)?;
                1
            }
            b'e' | 0x90 => {
                let m = self.items_from(true, 0)?;
                self.append(m)?;
                1
            }
            b'l' | 0x91 => {
                self.list_of_marked()?;
                1
            }
            0x8f => {
                self.stack.push(Value::List(Rc::new(List::new())));
                1
            }
            b')' => {
                self.tuple(Vec::new())?;
                1
            }
            b't' => {
                let items = self.pop_mark()?;
                self.tuple(items)?;
                1
            }
            0x85..=0x87 => {
                let n = (op - 0x84) as usize;
                if self.stack.len() < n
                    || self.marks.last().is_some_and(|&m| m > self.stack.len() - n)
                {
                    return Err(self.err("TUPLEn reads past the stack".into()));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                self.tuple(items)?;
                1
            }
            b'}' => {
                let d = self.new_dict();
                self.stack.push(d);
                1
            }
            b's' => {
                let m = self.items_from(false, 2)?;
                self.set_items(m, sink)?;
                1
            }
            b'u' => {
                let m = self.items_from(true, 0)?;
                self.set_items(m, sink)?;
                1
            }
            b'd' => {
                let m = self.items_from(true, 0)?;
                let d = self.new_dict();
                self.stack.insert(m, d);
                self.set_items(m + 1, sink)?;
                1
            }
            b'q' => {
                need!(2);
                self.memo_put(b[1] as usize)?;
                2
            }
            b'r' => {
                need!(5);
                self.memo_put(le(&b[1..5]) as usize)?;
                5
            }
            0x94 => {
                self.memo_put(self.memo.len())?;
                1
            }
            b'h' => {
                need!(2);
                self.memo_get(b[1] as usize)?;
                2
            }
            b'j' => {
                need!(5);
                self.memo_get(le(&b[1..5]) as usize)?;
                5
            }
            b'p' | b'g' => {
                let Some(nl) = b.iter().position(|&c| c == b'\n') else {
                    return self.wait_line(b);
                };
                let text = String::from_utf8_lossy(&b[1..nl]);
                let slot: usize = text
                    .trim()
                    .parse()
                    .map_err(|_| self.err(format!("a memo slot that is not a number: {text:?}")))?;
                if op == b'p' {
                    self.memo_put(slot)?;
                } else {
                    self.memo_get(slot)?;
                }
                nl + 1
            }
            b'c' => {
                let Some(nl1) = b.iter().position(|&c| c == b'\n') else {
                    return self.wait_line(b);
                };
                let Some(nl2) = b[nl1 + 1..].iter().position(|&c| c == b'\n') else {
                    return self.wait_line(&b[nl1 + 1..]);
                };
                let module = String::from_utf8_lossy(&b[1..nl1]).into_owned();
                let name = String::from_utf8_lossy(&b[nl1 + 1..nl1 + 1 + nl2]).into_owned();
                self.global(&module, &name)?;
                nl1 + nl2 + 2
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                let text = |v: &Value| match v {
                    Value::Str(s) => self.strings.get(*s).to_string(),
                    _ => "?".to_string(),
                };
                let (m, n) = (text(&module), text(&name));
                self.global(&m, &n)?;
                1
            }
            b'R' => {
                self.reduce()?;
                1
            }
            b'b' | 0x81 | 0x92 | b'i' | b'o' | b'P' | b'Q' | 0x82..=0x84 | 0x97 | 0x98 => {
                return Err(self.err(format!(
                    "the pickle builds Python objects (opcode {:?}): tracelane decodes plain \
                     data only and never runs what a pickle names",
                    opcode_name(op)
                )))
            }
            b'I' | b'L' | b'F' | b'S' | b'V' => {
                return Err(self
                    .err("a text (protocol 0/1) pickle: save it with protocol 2 or later".into()))
            }
            _ => return Err(self.err(format!("not a pickle opcode: 0x{op:02x}"))),
        };
        Ok(Step::Used(used))
    }

    /// A text operand with no newline yet: wait, unless the line is longer
    /// than any a data pickle writes.
    fn wait_line(&self, b: &[u8]) -> Result<Step, PickleError> {
        if b.len() > 4096 {
            return Err(self.err("a text operand without its newline".into()));
        }
        Ok(Step::Incomplete)
    }
}

/// Where a length-prefixed operand lies in `b` (its length: `width` bytes,
/// little-endian, after the opcode); `None` while its bytes have not all
/// arrived.
fn operand(b: &[u8], width: usize) -> Result<Option<std::ops::Range<usize>>, &'static str> {
    let Some(len) = b.get(1..1 + width) else {
        return Ok(None);
    };
    let n = len
        .iter()
        .enumerate()
        .fold(0u64, |n, (i, &x)| n | (x as u64) << (8 * i));
    let end = n
        .checked_add(1 + width as u64)
        .filter(|&e| e <= usize::MAX as u64)
        .ok_or("an operand longer than memory")?;
    if (b.len() as u64) < end {
        return Ok(None);
    }
    Ok(Some(1 + width..end as usize))
}

/// A little-endian two's-complement integer (`LONG1` / `LONG4`).
fn long(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Int(0);
    }
    let negative = bytes[bytes.len() - 1] & 0x80 != 0;
    if bytes.len() <= 8 {
        let mut v: u64 = if negative { u64::MAX } else { 0 };
        for (i, &x) in bytes.iter().enumerate() {
            v &= !(0xffu64 << (8 * i));
            v |= (x as u64) << (8 * i);
        }
        return Value::Int(v as i64);
    }
    // Longer: a value that fits u64 when its high bytes are zero.
    if !negative && bytes[8..].iter().all(|&x| x == 0) {
        let mut a = [0u8; 8];
        a.copy_from_slice(&bytes[..8]);
        let v = u64::from_le_bytes(a);
        return if v <= i64::MAX as u64 {
            Value::Int(v as i64)
        } else {
            Value::UInt(v)
        };
    }
    Value::BigInt
}

fn opcode_name(op: u8) -> &'static str {
    match op {
        b'b' => "BUILD",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'i' => "INST",
        b'o' => "OBJ",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x82..=0x84 => "EXT",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => "?",
    }
}

/// Decodes a whole pickle held in memory, keeping every value, and lets
/// `read` look at it (while the decoder lives: dropped, it empties the
/// containers it made, so that a crafted cycle is freed).
pub fn decode<R>(
    bytes: &[u8],
    read: impl FnOnce(&Value, &Interner) -> R,
) -> Result<R, PickleError> {
    let mut d = Decoder::new();
    d.push(bytes, &mut KeepAll)?;
    let v = d.finish()?;
    Ok(read(&v, &d.strings))
}

impl Drop for Decoder {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Whether bytes start like a pickle of protocol 2 to 5.
pub fn looks_like(head: &[u8]) -> bool {
    head.len() >= 3 && head[0] == 0x80 && (2..=5).contains(&head[1]) && {
        // What follows PROTO in the pickles written: FRAME (4+), or the
        // first container / value opcode.
        matches!(
            head[2],
            0x95 | b'}' | b']' | b'(' | b')' | b'c' | 0x8c | b'X' | b'N'
        )
    }
}

#[cfg(test)]
mod tests;
