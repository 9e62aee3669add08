//! Streams a nested JSON document: the containers a caller descends into
//! are opened as the bytes arrive, every other value is handed over whole
//! with its path (object keys; `[]` for an array's element), so memory
//! holds one such value, never the document. Nothing recurses: any depth
//! is safe.

use super::super::scan::{self, Scan};
use crate::error::ImportError;

/// What the walk found.
pub(super) enum Item<'a> {
    /// A whole value at `path`.
    Value { path: &'a [String], bytes: &'a [u8] },
    /// A container the walk descended into closed.
    Closed { path: &'a [String] },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A value comes next.
    Value,
    /// An array's first value, or its end.
    ValueOrEnd,
    /// An object's key, or its end (after `{`).
    KeyOrEnd,
    /// An object's key (after a comma).
    Key,
    Colon,
    /// After a value: a comma or the container's end.
    CommaOrEnd,
    Done,
}

pub(super) struct PathWalker {
    held: Vec<u8>,
    /// The open containers' paths: `path[..depth]`; `arrays[k]` whether
    /// level k is an array.
    path: Vec<String>,
    arrays: Vec<bool>,
    state: State,
    /// Hold bytes until this many before scanning a value again (a value
    /// longer than the chunks is rescanned only when the held bytes
    /// double: linear in its size).
    retry_at: usize,
    descend: fn(&[String]) -> bool,
    what: &'static str,
}

impl PathWalker {
    /// `descend(path)`: whether to open the container at `path` (the root
    /// is `[]`) rather than hand it over whole.
    pub(super) fn new(descend: fn(&[String]) -> bool, what: &'static str) -> Self {
        PathWalker {
            held: Vec::new(),
            path: Vec::new(),
            arrays: Vec::new(),
            state: State::Value,
            retry_at: 0,
            descend,
            what,
        }
    }

    pub(super) fn complete(&self) -> bool {
        self.state == State::Done
    }

    /// Takes the next bytes; `last`: no more will come.
    pub(super) fn push(
        &mut self,
        data: &[u8],
        last: bool,
        f: &mut dyn FnMut(Item),
    ) -> Result<(), ImportError> {
        if self.held.is_empty() {
            let used = self.read(data, last, f)?;
            self.held.extend_from_slice(&data[used..]);
            return Ok(());
        }
        self.held.extend_from_slice(data);
        if !last && self.held.len() < self.retry_at {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        let used = self.read(&held, last, f)?;
        self.retry_at = if used == 0 { held.len() * 2 } else { 0 };
        self.held = held[used..].to_vec();
        Ok(())
    }

    fn syntax(&self, what: &str, at: usize) -> ImportError {
        ImportError::NotATrace {
            reason: format!(
                "{} is not valid JSON: {what} (near byte {at} of a chunk)",
                self.what
            ),
        }
    }

    /// Reads what `b` holds whole; returns how many bytes were used.
    fn read(
        &mut self,
        b: &[u8],
        last: bool,
        f: &mut dyn FnMut(Item),
    ) -> Result<usize, ImportError> {
        let mut i = 0;
        loop {
            let j = scan::skip_ws(b, i);
            if self.state == State::Done {
                return Ok(b.len());
            }
            let Some(&c) = b.get(j) else {
                return Ok(i);
            };
            match self.state {
                State::Value | State::ValueOrEnd => {
                    if self.state == State::ValueOrEnd && c == b']' {
                        i = self.close(j, f);
                        continue;
                    }
                    let container = c == b'{' || c == b'[';
                    if container && (self.descend)(&self.path) {
                        self.arrays.push(c == b'[');
                        if c == b'[' {
                            // Elements of an array share its path + `[]`.
                            self.path.push("[]".into());
                            self.state = State::ValueOrEnd;
                        } else {
                            self.path.push(String::new());
                            self.state = State::KeyOrEnd;
                        }
                        i = j + 1;
                        continue;
                    }
                    let end = match scan::skip_value(b, j, last) {
                        Ok(e) => e,
                        Err(Scan::Incomplete) => return Ok(i),
                        Err(Scan::Syntax(s)) => return Err(self.syntax(s, j)),
                    };
                    f(Item::Value {
                        path: &self.path,
                        bytes: &b[j..end],
                    });
                    i = end;
                    self.after_value();
                }
                State::KeyOrEnd | State::Key => {
                    if c == b'}' && self.state == State::KeyOrEnd {
                        i = self.close(j, f);
                        continue;
                    }
                    if c != b'"' {
                        return Err(self.syntax("an object key", j));
                    }
                    let (span, end) = match scan::string(b, j) {
                        Ok(x) => x,
                        Err(Scan::Incomplete) => return Ok(i),
                        Err(Scan::Syntax(s)) => return Err(self.syntax(s, j)),
                    };
                    let key = scan::decode(b, span).text.into_owned();
                    if let Some(last) = self.path.last_mut() {
                        *last = key;
                    }
                    self.state = State::Colon;
                    i = end;
                }
                State::Colon => {
                    if c != b':' {
                        return Err(self.syntax("a colon", j));
                    }
                    self.state = State::Value;
                    i = j + 1;
                }
                State::CommaOrEnd => match c {
                    b',' => {
                        self.state = if self.arrays.last() == Some(&true) {
                            State::Value
                        } else {
                            State::Key
                        };
                        i = j + 1;
                    }
                    b'}' | b']' => i = self.close(j, f),
                    _ => return Err(self.syntax("a comma or the end of a list", j)),
                },
                State::Done => unreachable!(),
            }
        }
    }

    /// The innermost container ends at `b[j]`.
    fn close(&mut self, j: usize, f: &mut dyn FnMut(Item)) -> usize {
        self.path.pop();
        self.arrays.pop();
        f(Item::Closed { path: &self.path });
        self.after_value();
        j + 1
    }

    fn after_value(&mut self) {
        self.state = if self.arrays.is_empty() {
            State::Done
        } else {
            State::CommaOrEnd
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(doc: &[u8], chunk: usize) -> Vec<String> {
        let mut w = PathWalker::new(|p| p.len() < 3, "test");
        let mut out = Vec::new();
        for c in doc.chunks(chunk) {
            w.push(c, false, &mut |item| match item {
                Item::Value { path, bytes } => out.push(format!(
                    "{}={}",
                    path.join("."),
                    String::from_utf8_lossy(bytes)
                )),
                Item::Closed { path } => out.push(format!("close {}", path.join("."))),
            })
            .unwrap();
        }
        w.push(&[], true, &mut |_| {}).unwrap();
        assert!(w.complete());
        out
    }

    #[test]
    fn values_come_with_their_paths_whatever_the_chunks() {
        let doc =
            br#"{"a": [ {"x": 1, "y": [1, 2]}, {"x": "s\"}"} ], "b": {"c": [3, 4]}, "d": []}"#;
        let whole = walk(doc, doc.len());
        let want = [
            "a.[].x=1",
            "a.[].y=[1, 2]",
            "close a.[]",
            "a.[].x=\"s\\\"}\"",
            "close a.[]",
            "close a",
            "b.c.[]=3",
            "b.c.[]=4",
            "close b.c",
            "close b",
            "close d",
            "close ",
        ];
        assert_eq!(whole, want);
        for n in 1..doc.len() {
            assert_eq!(walk(doc, n), whole, "chunks of {n}");
        }
    }
}
