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
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

/// A JSON string's content bytes `b[start..end]` (without quotes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrSpan {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

/// Reads a string starting at the opening quote `b[i] == b'"'`.
#[inline]
pub fn string(b: &[u8], i: usize) -> R<(StrSpan, usize)> {
    debug_assert_eq!(b.get(i), Some(&b'"'));
    let start = i + 1;
    // Most strings in a trace are short keys and names: look at the first
    // bytes directly before paying for a vectorised search.
    let quick_end = (start + 24).min(b.len());
    for (k, &c) in b[start..quick_end].iter().enumerate() {
        match c {
            b'"' => {
                let end = start + k;
                return Ok((
                    StrSpan {
                        start,
                        end,
                        escaped: false,
                    },
                    end + 1,
                ));
            }
            b'\\' => break,
            _ => {}
        }
    }
    let mut j = start;
    let mut escaped = false;
    loop {
        match memchr2(b'"', b'\\', &b[j..]) {
            None => return Err(Scan::Incomplete),
            Some(k) => {
                j += k;
                if b[j] == b'"' {
                    return Ok((
                        StrSpan {
                            start,
                            end: j,
                            escaped,
                        },
                        j + 1,
                    ));
                }
                escaped = true;
                j += 2;
                if j > b.len() {
                    return Err(Scan::Incomplete);
                }
            }
        }
    }
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
#[inline]
pub fn scalar(b: &[u8], i: usize, last: bool) -> R<(usize, usize)> {
    let mut j = i;
    while j < b.len() {
        match b[j] {
            b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' | b':' => break,
            b'"' | b'{' | b'[' => return Err(Scan::Syntax("unexpected character in a value")),
            _ => j += 1,
        }
    }
    if j == b.len() && !last {
        return Err(Scan::Incomplete);
    }
    if j == i {
        return Err(Scan::Syntax("a value was expected"));
    }
    Ok((i, j))
}

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
    while j < b.len() {
        match b[j] {
            b'{' | b'[' => {
                depth += 1;
                j += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
            b'"' => j = string(b, j)?.1,
            _ => j += 1,
        }
    }
    Err(Scan::Incomplete)
}

/// Parses an integer from scalar text; accepts `12`, `-3`, `12.0`, `1e3`.
pub fn int_text(t: &[u8]) -> Option<i64> {
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let mut v: i64 = 0;
        for &d in digits {
            v = v * 10 + (d - b'0') as i64;
        }
        return Some(if neg { -v } else { v });
    }
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
    if body.is_empty() {
        return None;
    }
    if body.iter().any(|&c| c == b'e' || c == b'E') {
        let f: f64 = std::str::from_utf8(t).ok()?.parse().ok()?;
        let ns = (f * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.2e18).then_some(ns as i64);
    }
    let (int_part, frac_part) = match body.iter().position(|&c| c == b'.') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, &body[..0]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &d in int_part {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((d - b'0') as i64)?;
    }
    v = v.checked_mul(1000)?;
    let mut frac: i64 = 0;
    for k in 0..3 {
        frac *= 10;
        if let Some(&d) = frac_part.get(k) {
            if !d.is_ascii_digit() {
                return None;
            }
            frac += (d - b'0') as i64;
        }
    }
    if let Some(&d) = frac_part.get(3) {
        if !frac_part[3..].iter().all(u8::is_ascii_digit) {
            return None;
        }
        if d >= b'5' {
            frac += 1;
        }
    }
    v = v.checked_add(frac)?;
    Some(if neg { -v } else { v })
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

    #[test]
    fn decode_handles_escapes_and_surrogates() {
        let b = br#""a\"b\u00e9\ud83d\ude00""#;
        let (s, _) = string(b, 0).unwrap();
        assert_eq!(decode(b, s).text, "a\"bé😀");
    }
}
