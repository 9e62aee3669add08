//! Streams a JSON document made of top-level lists (`{"trace_event": […],
//! "cpu_util": […]}`, `{"events": […], "data_version": 2}`, or one bare
//! list): each list element is handed over on its own as its bytes arrive,
//! so memory holds one element, never the document.

use super::super::scan::{self, Scan};
use crate::error::ImportError;

/// What the walk found.
pub(super) enum Item<'a> {
    /// One element of the list under `key` (`""` for a bare list).
    Element { key: &'a str, bytes: &'a [u8] },
    /// A top-level value that is not a list.
    Value { key: &'a str, bytes: &'a [u8] },
}

/// Where the walk stands in the top-level JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
enum At {
    /// Before the first value.
    Start,
    /// In the top-level object, before a key (or its end).
    Key,
    /// Inside the list under a key (`None`: the whole file is a list).
    List(Option<String>),
    /// After the top-level value.
    Done,
}

/// The walk's state between pushes.
pub(super) struct Walker {
    held: Vec<u8>,
    at: At,
    /// Top-level keys in the order written.
    pub(super) keys: Vec<String>,
    /// What the format is called, for syntax errors.
    what: &'static str,
}

impl Walker {
    pub(super) fn new(what: &'static str) -> Walker {
        Walker {
            held: Vec::new(),
            at: At::Start,
            keys: Vec::new(),
            what,
        }
    }

    /// A walk that takes no bytes (its caller is given whole elements).
    pub(super) fn done(what: &'static str) -> Walker {
        Walker {
            at: At::Done,
            ..Walker::new(what)
        }
    }

    /// Whether the document was read to its end.
    pub(super) fn complete(&self) -> bool {
        self.at == At::Done
    }

    /// Whether any byte was read.
    pub(super) fn started(&self) -> bool {
        self.at != At::Start
    }

    /// Takes the next bytes; `last`: no more will come.
    pub(super) fn push(
        &mut self,
        data: &[u8],
        last: bool,
        f: &mut dyn FnMut(Item),
    ) -> Result<(), ImportError> {
        // Elements are read where they lie; only a cut-off one is held.
        if self.held.is_empty() {
            let used = self.read(data, last, f)?;
            self.held.extend_from_slice(&data[used..]);
            return Ok(());
        }
        self.held.extend_from_slice(data);
        let held = std::mem::take(&mut self.held);
        let used = self.read(&held, last, f);
        self.held = held;
        self.held.drain(..used?);
        Ok(())
    }

    fn syntax(&self, m: &'static str) -> ImportError {
        ImportError::Syntax {
            offset: 0,
            message: format!("{m} (reading {})", self.what),
        }
    }

    /// Reads what `buf` holds; returns how many bytes were consumed.
    fn read(
        &mut self,
        buf: &[u8],
        last: bool,
        f: &mut dyn FnMut(Item),
    ) -> Result<usize, ImportError> {
        let mut i = 0;
        loop {
            let j = scan::skip_ws(buf, i);
            let Some(&c) = buf.get(j) else {
                return Ok(i);
            };
            match &self.at {
                At::Start => {
                    self.at = match c {
                        b'{' => At::Key,
                        b'[' => At::List(None),
                        0xEF if buf[j..].starts_with(b"\xEF\xBB\xBF") => {
                            i = j + 3;
                            continue;
                        }
                        _ => {
                            return Err(ImportError::NotATrace {
                                reason: format!("{} must be a JSON object or list", self.what),
                            })
                        }
                    };
                    i = j + 1;
                }
                At::Key => match c {
                    b',' => i = j + 1,
                    b'}' => {
                        self.at = At::Done;
                        i = j + 1;
                    }
                    b'"' => {
                        let (key, k) = match scan::string(buf, j) {
                            Ok(x) => x,
                            Err(Scan::Incomplete) => return Ok(i),
                            Err(Scan::Syntax(m)) => return Err(self.syntax(m)),
                        };
                        let colon = scan::skip_ws(buf, k);
                        let v = scan::skip_ws(buf, colon + 1);
                        if v >= buf.len() {
                            return Ok(i);
                        }
                        if buf[colon] != b':' {
                            return Err(self.syntax("a key without a value"));
                        }
                        let name = String::from_utf8_lossy(&buf[key.start..key.end]).into_owned();
                        if buf[v] == b'[' {
                            self.keys.push(name.clone());
                            self.at = At::List(Some(name));
                            i = v + 1;
                            continue;
                        }
                        match scan::skip_value(buf, v, last) {
                            Ok(e) => {
                                f(Item::Value {
                                    key: &name,
                                    bytes: &buf[v..e],
                                });
                                self.keys.push(name);
                                i = e;
                            }
                            Err(Scan::Incomplete) => return Ok(i),
                            Err(Scan::Syntax(m)) => return Err(self.syntax(m)),
                        }
                    }
                    _ => return Err(self.syntax("expected a key")),
                },
                At::List(key) => match c {
                    b',' => i = j + 1,
                    b']' => {
                        self.at = if key.is_none() { At::Done } else { At::Key };
                        i = j + 1;
                    }
                    _ => {
                        let e = match scan::skip_value(buf, j, last) {
                            Ok(e) => e,
                            Err(Scan::Incomplete) => return Ok(i),
                            Err(Scan::Syntax(m)) => return Err(self.syntax(m)),
                        };
                        f(Item::Element {
                            key: key.as_deref().unwrap_or(""),
                            bytes: &buf[j..e],
                        });
                        i = e;
                    }
                },
                At::Done => return Ok(buf.len()),
            }
        }
    }
}
