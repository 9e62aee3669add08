//! Args kept packed: an event's stats as metadata ids and values in a few
//! bytes of the args arena, written out as JSON only when something asks
//! for them (the details panel, an analysis reading a stat).
//!
//! An XPlane event's stats name their keys by the plane's stat metadata
//! ids, and many events share the same leading stats (their event
//! metadata's). As JSON each event's args were ~110 bytes and the JSON
//! writing, the arena's growth and its copy between threads a third of a
//! large profile's import; packed they are the ids and values alone, and
//! the names are a table per process ([`StatNames`]).
//!
//! An entry is `TAG`, the event metadata id (varint), a flags byte (1:
//! exact times follow), the start offset and duration in picoseconds
//! (zigzag varints) when flagged, then each stat: its metadata id (varint),
//! a kind byte and the value. `TAG` (0xFF) is never the first byte of
//! UTF-8 text, so a JSON entry and a packed one are told apart by it.

use std::borrow::Cow;
use std::io::Write;

use rustc_hash::FxHashMap as HashMap;

use crate::ids::ProcessIdx;

/// The first byte of a packed entry.
pub const TAG: u8 = 0xFF;

const HAS_TIMES: u8 = 1;

const F64: u8 = 1;
const U64: u8 = 2;
const I64: u8 = 3;
const STR: u8 = 4;
const REF: u8 = 5;
const BYTES: u8 = 6;

/// A stat's name as JSON: `"name":` and `"name"` (what a `ref` value
/// that names it writes).
#[derive(Clone, Debug)]
pub struct StatName {
    pub key: Box<[u8]>,
    pub text: Box<[u8]>,
}

impl StatName {
    pub fn new(name: &str) -> StatName {
        let mut text = Vec::with_capacity(name.len() + 2);
        json_string(&mut text, name);
        let mut key = text.clone();
        key.push(b':');
        StatName {
            key: key.into(),
            text: text.into(),
        }
    }
}

/// What a process's packed entries need to be written as JSON: its stat
/// names by metadata id, and each event metadata's leading args (its own
/// stats, as JSON members without braces).
#[derive(Clone, Debug, Default)]
pub struct StatNames {
    pub keys: HashMap<i64, StatName>,
    pub metas: HashMap<i64, Box<[u8]>>,
}

/// The name tables of every process whose events have packed args.
#[derive(Clone, Debug, Default)]
pub struct PackedArgs {
    by_process: HashMap<u32, StatNames>,
}

impl PackedArgs {
    pub fn is_empty(&self) -> bool {
        self.by_process.is_empty()
    }

    /// Adds `names` to process `p`'s tables (what is there already stays:
    /// the pieces of one plane name the same ids the same way).
    pub fn add(&mut self, p: ProcessIdx, names: StatNames) {
        let mine = self.by_process.entry(p.0).or_default();
        for (id, k) in names.keys {
            mine.keys.entry(id).or_insert(k);
        }
        for (id, m) in names.metas {
            mine.metas.entry(id).or_insert(m);
        }
    }

    /// Moves every table in, its process renumbered by `process`.
    pub fn absorb(&mut self, other: PackedArgs, process: impl Fn(ProcessIdx) -> ProcessIdx) {
        for (p, names) in other.by_process {
            self.add(process(ProcessIdx(p)), names);
        }
    }

    /// Whether process `p`'s events declare a stat named `key` (its
    /// plane's stat metadata has it, whether or not an event uses it).
    pub fn declares(&self, p: ProcessIdx, key: &str) -> bool {
        let want = StatName::new(key).key;
        self.by_process
            .get(&p.0)
            .is_some_and(|names| names.keys.values().any(|k| k.key == want))
    }

    /// The JSON of a packed entry of process `p`.
    pub fn json(&self, p: ProcessIdx, entry: &[u8]) -> String {
        let empty = StatNames::default();
        let names = self.by_process.get(&p.0).unwrap_or(&empty);
        render(names, entry).unwrap_or_else(|| "{}".to_string())
    }

    /// Which stat ids and event metadata of each process give a member
    /// named `key` (worked out once for a scan over many events).
    pub fn key(&self, key: &str) -> KeyIds {
        let want = StatName::new(key).key;
        let by_process = self
            .by_process
            .iter()
            .map(|(&p, names)| {
                let stats = names
                    .keys
                    .iter()
                    .filter(|(_, k)| k.key == want)
                    .map(|(&id, _)| id)
                    .collect();
                let metas = names
                    .metas
                    .iter()
                    .filter(|(_, m)| m.windows(want.len()).any(|w| *w == *want))
                    .map(|(&id, _)| id)
                    .collect();
                (p, (stats, metas))
            })
            .collect();
        KeyIds { by_process }
    }

    pub fn heap_bytes(&self) -> usize {
        self.by_process
            .values()
            .map(|n| {
                n.keys
                    .values()
                    .map(|k| k.key.len() + k.text.len() + 48)
                    .sum::<usize>()
                    + n.metas.values().map(|m| m.len() + 24).sum::<usize>()
            })
            .sum()
    }
}

/// The ids that give a member of one name, per process ([`PackedArgs::key`]).
#[derive(Clone, Debug, Default)]
pub struct KeyIds {
    by_process: HashMap<u32, (Vec<i64>, Vec<i64>)>,
}

impl KeyIds {
    /// Whether a packed entry of process `p` has the member.
    pub fn in_entry(&self, p: ProcessIdx, entry: &[u8]) -> bool {
        let Some((stats, metas)) = self.by_process.get(&p.0) else {
            return false;
        };
        let Some(head) = Head::read(entry) else {
            return false;
        };
        if metas.contains(&head.meta) {
            return true;
        }
        if stats.is_empty() {
            return false;
        }
        let mut found = false;
        let _ = each_stat(&entry[head.len..], |id, _| found |= stats.contains(&id));
        found
    }
}

/// A stat read from a packed entry without writing the entry out as JSON.
#[derive(Clone, Copy, Debug)]
pub enum Stat<'a> {
    /// The entry has no such stat.
    Missing,
    /// Its value (the last, where the stat repeats: what the JSON's last
    /// member would say).
    Value(Value<'a>),
    /// Only the JSON says: the entry is not packed, or its event
    /// metadata's members may hold the key.
    Json,
}

impl KeyIds {
    /// The member's value in a packed entry of process `p`.
    pub fn stat<'a>(&self, p: ProcessIdx, entry: &'a [u8]) -> Stat<'a> {
        let Some(head) = Head::read(entry) else {
            return Stat::Json;
        };
        let Some((stats, metas)) = self.by_process.get(&p.0) else {
            return Stat::Missing;
        };
        if metas.contains(&head.meta) {
            return Stat::Json;
        }
        let mut found = Stat::Missing;
        let whole = each_stat(&entry[head.len..], |id, v| {
            if stats.contains(&id) {
                found = Stat::Value(v);
            }
        });
        if whole.is_none() {
            // Broken off: the JSON (what it keeps of it) decides.
            return Stat::Json;
        }
        found
    }
}

impl PackedArgs {
    /// A text value of process `p`'s entry as text: a string, or the stat
    /// name a reference names (XPlane interns repeated strings so);
    /// `None` for a number.
    pub fn value_text<'a>(&'a self, p: ProcessIdx, v: Value<'a>) -> Option<Cow<'a, str>> {
        match v {
            Value::Str(s) => Some(String::from_utf8_lossy(s)),
            Value::Ref(r) => {
                let names = self.by_process.get(&p.0)?;
                let text = &names.keys.get(&i64::try_from(r).ok()?)?.text;
                // The JSON string without its quotes, unless it escapes.
                let inner = text.get(1..text.len().checked_sub(1)?)?;
                if !inner.contains(&b'\\') {
                    return std::str::from_utf8(inner).ok().map(Cow::Borrowed);
                }
                serde_json::from_slice::<String>(text).ok().map(Cow::Owned)
            }
            _ => None,
        }
    }
}

impl Value<'_> {
    /// An integer value (as the JSON's number would read as `i64`).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Value::I64(v) => Some(v),
            Value::U64(v) => i64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// A stat's value as the packer takes it.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    F64(f64),
    U64(u64),
    I64(i64),
    /// Text (written as JSON string, invalid UTF-8 replaced).
    Str(&'a [u8]),
    /// The id of a stat name whose name is the value.
    Ref(u64),
    /// Bytes, of which only the length is kept (`"(N bytes)"`).
    Bytes(usize),
}

/// Starts a packed entry in `out` (cleared): event metadata `meta`, and
/// its exact times when given.
pub fn begin(out: &mut Vec<u8>, meta: i64, times_ps: Option<(i64, i64)>) {
    out.clear();
    out.push(TAG);
    varint(out, meta as u64);
    match times_ps {
        Some((offset, duration)) => {
            out.push(HAS_TIMES);
            varint(out, zigzag(offset));
            varint(out, zigzag(duration));
        }
        None => out.push(0),
    }
}

/// Appends one stat to a packed entry.
pub fn stat(out: &mut Vec<u8>, id: i64, value: Value) {
    varint(out, id as u64);
    match value {
        Value::F64(v) => {
            out.push(F64);
            out.extend_from_slice(&v.to_le_bytes());
        }
        Value::U64(v) => {
            out.push(U64);
            varint(out, v);
        }
        Value::I64(v) => {
            out.push(I64);
            varint(out, zigzag(v));
        }
        Value::Str(s) => {
            out.push(STR);
            varint(out, s.len() as u64);
            out.extend_from_slice(s);
        }
        Value::Ref(r) => {
            out.push(REF);
            varint(out, r);
        }
        Value::Bytes(n) => {
            out.push(BYTES);
            varint(out, n as u64);
        }
    }
}

/// Appends `"name":value` to JSON members (after a comma unless `out`
/// holds none yet: empty, or just `{`).
pub fn write_member(out: &mut Vec<u8>, keys: &HashMap<i64, StatName>, name: &StatName, v: Value) {
    if !out.is_empty() && out != b"{" {
        out.push(b',');
    }
    out.extend_from_slice(&name.key);
    match v {
        Value::F64(v) if v.is_finite() => {
            let _ = write!(out, "{v}");
        }
        Value::F64(_) => out.extend_from_slice(b"null"),
        Value::U64(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        Value::I64(v) => out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes()),
        Value::Str(v) => json_string(out, &String::from_utf8_lossy(v)),
        Value::Ref(r) => match i64::try_from(r).ok().and_then(|r| keys.get(&r)) {
            Some(k) => out.extend_from_slice(&k.text),
            None => out.extend_from_slice(b"\"\""),
        },
        Value::Bytes(n) => {
            let _ = write!(out, "\"({n} bytes)\"");
        }
    }
}

/// A JSON string of `s` (most names and values need no escaping: copied
/// as they are).
pub fn json_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|c| c >= 0x20 && c != b'"' && c != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    let _ = serde_json::to_writer(&mut *out, s);
}

/// An entry's metadata id, times and where its stats start.
struct Head {
    meta: i64,
    times: Option<(i64, i64)>,
    len: usize,
}

impl Head {
    fn read(b: &[u8]) -> Option<Head> {
        let mut pos = 1;
        if b.first() != Some(&TAG) {
            return None;
        }
        let meta = read_varint(b, &mut pos)? as i64;
        let flags = *b.get(pos)?;
        pos += 1;
        let times = if flags & HAS_TIMES != 0 {
            let o = unzigzag(read_varint(b, &mut pos)?);
            let d = unzigzag(read_varint(b, &mut pos)?);
            Some((o, d))
        } else {
            None
        };
        Some(Head {
            meta,
            times,
            len: pos,
        })
    }
}

/// Calls `f` with each stat of the entry's stat bytes; `None` where they
/// break off.
fn each_stat<'a>(b: &'a [u8], mut f: impl FnMut(i64, Value<'a>)) -> Option<()> {
    let mut pos = 0;
    while pos < b.len() {
        let id = read_varint(b, &mut pos)? as i64;
        let kind = *b.get(pos)?;
        pos += 1;
        let v = match kind {
            F64 => {
                let bytes = b.get(pos..pos + 8)?;
                pos += 8;
                Value::F64(f64::from_le_bytes(bytes.try_into().ok()?))
            }
            U64 => Value::U64(read_varint(b, &mut pos)?),
            I64 => Value::I64(unzigzag(read_varint(b, &mut pos)?)),
            STR => {
                let n = usize::try_from(read_varint(b, &mut pos)?).ok()?;
                let s = b.get(pos..pos.checked_add(n)?)?;
                pos += n;
                Value::Str(s)
            }
            REF => Value::Ref(read_varint(b, &mut pos)?),
            BYTES => Value::Bytes(usize::try_from(read_varint(b, &mut pos)?).ok()?),
            _ => return None,
        };
        f(id, v);
    }
    Some(())
}

/// An entry as JSON: `{`, its metadata's members, its stats in order, its
/// exact times (`offset_ps`, `duration_ps`), `}`.
fn render(names: &StatNames, entry: &[u8]) -> Option<String> {
    let head = Head::read(entry)?;
    let mut out = Vec::with_capacity(128);
    out.push(b'{');
    if let Some(m) = names.metas.get(&head.meta) {
        out.extend_from_slice(m);
    }
    each_stat(&entry[head.len..], |id, v| {
        if let Some(name) = names.keys.get(&id) {
            write_member(&mut out, &names.keys, name, v);
        }
    })?;
    if let Some((offset, duration)) = head.times {
        if out.len() > 1 {
            out.push(b',');
        }
        out.extend_from_slice(b"\"offset_ps\":");
        out.extend_from_slice(itoa::Buffer::new().format(offset).as_bytes());
        out.extend_from_slice(b",\"duration_ps\":");
        out.extend_from_slice(itoa::Buffer::new().format(duration).as_bytes());
    }
    out.push(b'}');
    String::from_utf8(out).ok()
}

/// The text of an arena entry: JSON as it is, or a packed one written out.
pub(crate) fn text<'a>(packed: &PackedArgs, p: ProcessIdx, bytes: &'a [u8]) -> Cow<'a, str> {
    if bytes.first() == Some(&TAG) {
        return Cow::Owned(packed.json(p, bytes));
    }
    Cow::Borrowed(std::str::from_utf8(bytes).unwrap_or("{}"))
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> StatNames {
        let mut n = StatNames::default();
        n.keys.insert(1, StatName::new("hlo_op"));
        n.keys.insert(2, StatName::new("_src"));
        n.keys.insert(3, StatName::new("x\"y"));
        n.keys.insert(4, StatName::new("flops"));
        n.metas
            .insert(9, b"\"metadata_name\":\"3/fusion\"".to_vec().into());
        n
    }

    #[test]
    fn a_packed_entry_is_written_as_the_json_the_stats_make() {
        let mut e = Vec::new();
        begin(&mut e, 9, Some((-5, 1_000_000_000_000)));
        stat(&mut e, 1, Value::Str(b"fusion"));
        stat(&mut e, 2, Value::Ref(3));
        stat(&mut e, 4, Value::F64(1.5));
        stat(&mut e, 4, Value::F64(f64::NAN));
        stat(&mut e, 3, Value::I64(-7));
        stat(&mut e, 3, Value::U64(u64::MAX));
        stat(&mut e, 1, Value::Bytes(12));
        stat(&mut e, 2, Value::Ref(77));
        stat(&mut e, 55, Value::U64(1));
        let mut packed = PackedArgs::default();
        packed.add(ProcessIdx(2), names());
        let json = packed.json(ProcessIdx(2), &e);
        assert_eq!(
            json,
            r#"{"metadata_name":"3/fusion","hlo_op":"fusion","_src":"x\"y","flops":1.5,"flops":null,"x\"y":-7,"x\"y":18446744073709551615,"hlo_op":"(12 bytes)","_src":"","offset_ps":-5,"duration_ps":1000000000000}"#
        );
        let has = |key| packed.key(key).in_entry(ProcessIdx(2), &e);
        assert!(has("flops") && has("metadata_name") && has("x\"y"));
        assert!(!has("tf_op") && !has("3/fusion"));
        assert!(!packed.key("flops").in_entry(ProcessIdx(3), &e));
        assert_eq!(
            packed.json(ProcessIdx(3), &e),
            r#"{"offset_ps":-5,"duration_ps":1000000000000}"#
        );
    }

    #[test]
    fn a_packed_entry_cut_short_is_empty_args() {
        let mut e = Vec::new();
        begin(&mut e, 300, None);
        stat(&mut e, 1, Value::Str(b"fusion"));
        let mut packed = PackedArgs::default();
        packed.add(ProcessIdx(0), names());
        for n in 0..e.len() {
            assert_eq!(packed.json(ProcessIdx(0), &e[..n]), "{}", "{n}");
        }
        assert_eq!(packed.json(ProcessIdx(0), &e), r#"{"hlo_op":"fusion"}"#);
    }

    #[test]
    fn a_stat_reads_from_the_packed_entry_as_its_json_would_say() {
        let mut e = Vec::new();
        begin(&mut e, 8, Some((1, 2)));
        stat(&mut e, 1, Value::Ref(3));
        stat(&mut e, 4, Value::I64(-7));
        stat(&mut e, 4, Value::U64(40));
        let mut packed = PackedArgs::default();
        packed.add(ProcessIdx(0), names());
        let p = ProcessIdx(0);
        fn read<'a>(packed: &PackedArgs, key: &str, e: &'a [u8]) -> Stat<'a> {
            packed.key(key).stat(ProcessIdx(0), e)
        }
        // A reference is the text of the stat name it names; the last of
        // a repeated stat is the value, as the JSON's last member.
        let Stat::Value(hlo) = read(&packed, "hlo_op", &e) else {
            panic!()
        };
        assert_eq!(packed.value_text(p, hlo).as_deref(), Some("x\"y"));
        let Stat::Value(flops) = read(&packed, "flops", &e) else {
            panic!()
        };
        assert_eq!(
            (flops.as_i64(), packed.value_text(p, flops)),
            (Some(40), None)
        );
        assert!(matches!(read(&packed, "_src", &e), Stat::Missing));
        // Members of the event's metadata, an entry cut short, JSON args:
        // only the JSON says.
        let mut m = Vec::new();
        begin(&mut m, 9, None);
        assert!(matches!(read(&packed, "metadata_name", &m), Stat::Json));
        begin(&mut m, 8, None);
        stat(&mut m, 1, Value::Str(b"fusion"));
        assert!(matches!(
            read(&packed, "hlo_op", &m[..m.len() - 2]),
            Stat::Json
        ));
        assert!(matches!(read(&packed, "hlo_op", b"{}"), Stat::Json));
    }
}
