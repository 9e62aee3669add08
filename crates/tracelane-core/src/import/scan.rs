//! Byte-level JSON scanning primitives for the streaming importer.
//!
//! Every function takes the buffer and a position and either returns the
//! position after what it read, or says the buffer ended too early
//! ([`Scan::Incomplete`]: push more bytes and retry from the same place) or
//! that the bytes are not JSON ([`Scan::Syntax`]). Nothing recurses, so
//! arbitrarily deep nesting cannot overflow the stack.

use memchr::memchr2;
use std::borrow::Cow;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan {
    Incomplete,
    Syntax(&'static str),
}

pub type R<T> = Result<T, Scan>;

#[inline]
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        // JSON whitespace all lies below `!`: one comparison settles most bytes.
        if c > b' ' || !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        i += 1;
    }
    i
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` that is `"` or `\` is set (and maybe
/// of bytes after the first such: only the lowest set bit is exact).
#[inline(always)]
fn quote_or_backslash(x: u64) -> u64 {
    let q = x ^ (ONES * b'"' as u64);
    let s = x ^ (ONES * b'\\' as u64);
    ((q.wrapping_sub(ONES) & !q) | (s.wrapping_sub(ONES) & !s)) & HIGHS
}

/// A JSON string's content bytes `b[start..end]` (without quotes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrSpan {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

/// Reads a string starting at the opening quote `b[i] == b'"'`.
#[inline(always)]
pub fn string(b: &[u8], i: usize) -> R<(StrSpan, usize)> {
    debug_assert_eq!(b.get(i), Some(&b'"'));
    let start = i + 1;
    // Most strings in a trace are short keys and names: eight bytes at a
    // time first, a vectorised search only for long ones.
    let mut j = start;
    let mut stop = None;
    for _ in 0..4 {
        let Some(word) = b.get(j..j + 8) else { break };
        let found = quote_or_backslash(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        if found != 0 {
            stop = Some(j + (found.trailing_zeros() / 8) as usize);
            break;
        }
        j += 8;
    }
    let stop = match stop {
        Some(k) => k,
        None => j + memchr2(b'"', b'\\', &b[j.min(b.len())..]).ok_or(Scan::Incomplete)?,
    };
    if b[stop] == b'"' {
        return Ok(ended(start, stop, false));
    }
    // `b[j]` is a backslash: it and the byte it escapes are skipped.
    let mut j = stop;
    loop {
        j += 2;
        if j > b.len() {
            return Err(Scan::Incomplete);
        }
        j += memchr2(b'"', b'\\', &b[j..]).ok_or(Scan::Incomplete)?;
        if b[j] == b'"' {
            return Ok(ended(start, j, true));
        }
    }
}

/// A string whose content is `start..end`, its closing quote at `end`.
#[inline]
fn ended(start: usize, end: usize, escaped: bool) -> (StrSpan, usize) {
    let span = StrSpan {
        start,
        end,
        escaped,
    };
    (span, end + 1)
}

/// Whether a string's text was not valid UTF-8 (replaced with U+FFFD).
pub struct Decoded<'a> {
    pub text: Cow<'a, str>,
    pub lossy: bool,
}

/// The text of a string span, unescaped; invalid UTF-8 is replaced and flagged.
pub fn decode(b: &[u8], s: StrSpan) -> Decoded<'_> {
    let raw = &b[s.start..s.end];
    if !s.escaped {
        return match std::str::from_utf8(raw) {
            Ok(t) => Decoded {
                text: Cow::Borrowed(t),
                lossy: false,
            },
            Err(_) => Decoded {
                text: Cow::Owned(String::from_utf8_lossy(raw).into_owned()),
                lossy: true,
            },
        };
    }
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut lossy = false;
    let mut k = 0;
    while k < raw.len() {
        let c = raw[k];
        if c != b'\\' || k + 1 >= raw.len() {
            out.push(c);
            k += 1;
            continue;
        }
        let e = raw[k + 1];
        k += 2;
        match e {
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            b'/' => out.push(b'/'),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let hex = |at: usize| -> Option<u32> {
                    let h = raw.get(at..at + 4)?;
                    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
                };
                let Some(mut cp) = hex(k) else {
                    lossy = true;
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                    continue;
                };
                k += 4;
                let low_follows = raw.get(k) == Some(&b'\\') && raw.get(k + 1) == Some(&b'u');
                if (0xD800..0xDC00).contains(&cp) && low_follows {
                    if let Some(lo) = hex(k + 2).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        k += 6;
                    }
                }
                match char::from_u32(cp) {
                    Some(ch) => {
                        let mut tmp = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                    }
                    None => {
                        lossy = true;
                        out.extend_from_slice("\u{FFFD}".as_bytes());
                    }
                }
            }
            other => {
                lossy = true;
                out.push(other);
            }
        }
    }
    match String::from_utf8(out) {
        Ok(s) => Decoded {
            text: Cow::Owned(s),
            lossy,
        },
        Err(e) => Decoded {
            text: Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
            lossy: true,
        },
    }
}

/// Reads a scalar (number, `true`, `NaN`, …) up to the next delimiter and
/// returns its text span. `last` says no more bytes will come, so a scalar
/// ending the buffer is complete.
#[inline(always)]
pub fn scalar(b: &[u8], i: usize, last: bool) -> R<(usize, usize)> {
    let mut j = i;
    while j < b.len() && SCALAR_END[b[j] as usize] == 0 {
        j += 1;
    }
    if j < b.len() && SCALAR_END[b[j] as usize] == 2 {
        return Err(Scan::Syntax("unexpected character in a value"));
    }
    if j == b.len() && !last {
        return Err(Scan::Incomplete);
    }
    if j == i {
        return Err(Scan::Syntax("a value was expected"));
    }
    Ok((i, j))
}

/// Bytes that end a scalar: 1 a delimiter, 2 a byte that cannot follow one
/// (`"`, `{`, `[`).
static SCALAR_END: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut k = 0;
    let ends = *b",}] \n\r\t:";
    while k < ends.len() {
        t[ends[k] as usize] = 1;
        k += 1;
    }
    t[b'"' as usize] = 2;
    t[b'{' as usize] = 2;
    t[b'[' as usize] = 2;
    t
};

/// Bytes that matter inside a nested value: 1 a quote, 2 an opening and 3
/// a closing bracket; everything else is stepped over.
static NESTING: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = 1;
    t[b'{' as usize] = 2;
    t[b'[' as usize] = 2;
    t[b'}' as usize] = 3;
    t[b']' as usize] = 3;
    t
};

/// Skips one whole value (any nesting depth) starting at `b[i]`.
pub fn skip_value(b: &[u8], i: usize, last: bool) -> R<usize> {
    let mut j = skip_ws(b, i);
    if j >= b.len() {
        return Err(Scan::Incomplete);
    }
    match b[j] {
        b'"' => return string(b, j).map(|(_, e)| e),
        b'{' | b'[' => {}
        _ => return scalar(b, j, last).map(|(_, e)| e),
    }
    let mut depth: usize = 0;
    loop {
        while j < b.len() && NESTING[b[j] as usize] == 0 {
            j += 1;
        }
        let Some(&c) = b.get(j) else {
            return Err(Scan::Incomplete);
        };
        match NESTING[c as usize] {
            1 => j = string(b, j)?.1,
            2 => {
                depth += 1;
                j += 1;
            }
            _ => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
        }
    }
}

/// Parses an integer from scalar text; accepts `12`, `-3`, `12.0`, `1e3`.
#[inline]
pub fn int_text(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    if !digits.is_empty() && digits.len() <= 18 {
        // One pass; 18 digits cannot overflow.
        let mut v: i64 = 0;
        let mut plain = true;
        for &d in digits {
            let x = d.wrapping_sub(b'0');
            plain &= x < 10;
            v = v.wrapping_mul(10).wrapping_add(x as i64);
        }
        if plain {
            return Some(if neg { -v } else { v });
        }
    }
    int_text_slow(t)
}

#[inline(never)]
fn int_text_slow(t: &[u8]) -> Option<i64> {
    let f: f64 = std::str::from_utf8(t).ok()?.parse().ok()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
}

/// Integer nanoseconds as Chrome's decimal microseconds (`1.500` for 1500),
/// exactly — the inverse of [`micros_text_to_ns`]. Text, because an `f64`
/// cannot hold epoch nanoseconds. Used by the importers that translate other
/// formats into Chrome JSON.
pub fn ns_to_micros_text(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Converts a decimal count of microseconds (`"5140422180885.597"`) to
/// integer nanoseconds exactly, without going through a float. Digits past
/// the nanosecond are rounded half away from zero. Exponent forms fall back
/// to `f64`. Returns `None` for text that is not a finite number or would
/// overflow `i64`.
pub fn micros_text_to_ns(t: &[u8]) -> Option<i64> {
    let (neg, body) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    // One pass. Sixteen significant digits of microseconds (epoch
    // microseconds have sixteen) fit a u64 in nanoseconds: plain
    // multiplications, no overflow checks (which wasm has no instruction for).
    let mut v: u64 = 0;
    let mut k = 0;
    while let Some(&c) = body.get(k) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        k += 1;
    }
    let int_digits = k;
    if int_digits > 16 {
        // Leading zeros do not count; more digits than that may have wrapped.
        let zeros = body.iter().take_while(|&&c| c == b'0').count();
        if int_digits - zeros.min(int_digits) > 16 {
            return None;
        }
    }
    let mut frac: u64 = 0;
    let mut frac_digits = 0;
    if body.get(k) == Some(&b'.') {
        k += 1;
        while let Some(&c) = body.get(k) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            match frac_digits {
                0..=2 => frac = frac * 10 + d as u64,
                3 => frac += u64::from(d >= 5),
                _ => {}
            }
            frac_digits += 1;
            k += 1;
        }
    }
    if k < body.len() {
        // Not plain decimal: an exponent form, or not a number at all.
        if !body.iter().any(|&c| c == b'e' || c == b'E') {
            return None;
        }
        let f: f64 = std::str::from_utf8(t).ok()?.parse().ok()?;
        let ns = (f * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    for _ in frac_digits.min(3)..3 {
        frac *= 10;
    }
    let ns = i64::try_from(v * 1000 + frac).ok()?;
    Some(if neg { -ns } else { ns })
}

/// Removes whitespace outside strings (for a compact shapes key).
pub fn compact_json(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_str = false;
    let mut esc = false;
    for &c in raw {
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            out.push(c as char);
        } else if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            if c == b'"' {
                in_str = true;
            }
            out.push(c as char);
        }
    }
    if raw.is_ascii() {
        out
    } else {
        String::from_utf8_lossy(raw).split_whitespace().collect()
    }
}

/// One key of a document's top-level object, as far as its first bytes
/// hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopKey<'a> {
    /// The key's raw bytes (escapes left as written).
    pub key: &'a [u8],
    /// The key's whole value, when the bytes hold all of it.
    pub value: Option<&'a [u8]>,
    /// The value's first byte (`[`, `{`, `"`, a digit…), when present.
    pub first: Option<u8>,
}

/// The keys of the top-level object whose first bytes are `head`, in the
/// order written, up to the first value that runs past `head` (that key is
/// the last one listed). `None` when `head` does not start an object (after
/// whitespace and a UTF-8 byte order mark) or is not JSON there. Formats
/// whose producers sort their keys (Go's encoder: Neuron Explorer) are
/// told apart by their keys, not by where one of them happens to fall.
pub fn top_level_keys(head: &[u8]) -> Option<Vec<TopKey<'_>>> {
    let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let off = head.len() - body.len();
    let mut i = skip_ws(head, off);
    if head.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut keys = Vec::new();
    loop {
        i = skip_ws(head, i);
        match head.get(i) {
            None | Some(b'}') => return Some(keys),
            Some(b',') => {
                i += 1;
                continue;
            }
            Some(b'"') => {}
            Some(_) => return None,
        }
        let (key, k) = match string(head, i) {
            Ok(x) => x,
            Err(Scan::Incomplete) => return Some(keys),
            Err(Scan::Syntax(_)) => return None,
        };
        let colon = skip_ws(head, k);
        match head.get(colon) {
            None => return Some(keys),
            Some(b':') => {}
            Some(_) => return None,
        }
        let v = skip_ws(head, colon + 1);
        let first = head.get(v).copied();
        let end = skip_value(head, v, false).ok();
        keys.push(TopKey {
            key: &head[key.start..key.end],
            value: end.map(|e| &head[v..e]),
            first,
        });
        match end {
            Some(e) => i = e,
            None => return Some(keys),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_convert_exactly() {
        assert_eq!(
            micros_text_to_ns(b"5140422180885.597"),
            Some(5_140_422_180_885_597)
        );
        assert_eq!(micros_text_to_ns(b"1.5"), Some(1500));
        assert_eq!(micros_text_to_ns(b"-2.25"), Some(-2250));
        assert_eq!(micros_text_to_ns(b"7"), Some(7000));
        assert_eq!(micros_text_to_ns(b"0.0015"), Some(2));
        assert_eq!(micros_text_to_ns(b"1e3"), Some(1_000_000));
        assert_eq!(micros_text_to_ns(b"NaN"), None);
        assert_eq!(micros_text_to_ns(b"99999999999999999999"), None);
    }

    #[test]
    fn skip_value_survives_deep_nesting() {
        let mut v = vec![b'['; 100_000];
        v.extend(vec![b']'; 100_000]);
        assert_eq!(skip_value(&v, 0, true), Ok(200_000));
        assert_eq!(skip_value(&v[..1000], 0, false), Err(Scan::Incomplete));
    }

    /// A byte-at-a-time reading of a string, to check the word-at-a-time one.
    fn string_reference(b: &[u8], i: usize) -> R<(StrSpan, usize)> {
        let mut j = i + 1;
        let mut escaped = false;
        while j < b.len() {
            match b[j] {
                b'"' => {
                    let span = StrSpan {
                        start: i + 1,
                        end: j,
                        escaped,
                    };
                    return Ok((span, j + 1));
                }
                b'\\' => {
                    escaped = true;
                    j += 2;
                }
                _ => j += 1,
            }
        }
        Err(Scan::Incomplete)
    }

    #[test]
    fn strings_end_at_the_first_unescaped_quote_wherever_it_falls() {
        // Quotes, backslashes and ends of input at every offset across the
        // 8-byte words and the switch to the vectorised search at 32 bytes.
        for len in 0..48 {
            for special in [None, Some(b'"'), Some(b'\\')] {
                for at in 0..len.max(1) {
                    let mut b = vec![b'"'];
                    b.extend((0..len).map(|k| match special {
                        Some(c) if k == at => c,
                        _ => b'a' + (k % 26) as u8,
                    }));
                    for closed in [false, true] {
                        let mut b = b.clone();
                        if closed {
                            b.push(b'"');
                        }
                        assert_eq!(
                            string(&b, 0),
                            string_reference(&b, 0),
                            "{:?}",
                            String::from_utf8_lossy(&b)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn top_level_keys_stop_where_the_head_ends() {
        let head = br#" {"cpu_util": [{"util": 1}], "device_mem_usage": [{"hbm_idx": "0"}, {"hb"#;
        let keys = top_level_keys(head).unwrap();
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0].key, b"cpu_util");
        assert_eq!(keys[0].value, Some(&br#"[{"util": 1}]"#[..]));
        assert_eq!(keys[1].key, b"device_mem_usage");
        assert_eq!((keys[1].value, keys[1].first), (None, Some(b'[')));
        assert_eq!(top_level_keys(b"[1, 2]"), None);
        assert_eq!(top_level_keys(b"\xEF\xBB\xBF{}").map(|k| k.len()), Some(0));
        assert_eq!(top_level_keys(br#"{"a" 1}"#), None);
    }

    #[test]
    fn decode_handles_escapes_and_surrogates() {
        let b = br#""a\"b\u00e9\ud83d\ude00""#;
        let (s, _) = string(b, 0).unwrap();
        assert_eq!(decode(b, s).text, "a\"bé😀");
    }
}
