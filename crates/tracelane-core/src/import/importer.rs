//! The streaming importer: [`Importer`] takes a file's bytes in chunks,
//! inflates gzip, decides the format once ([`super::format`]) and streams
//! the bytes into that format's reader, then ends with the model (or an
//! archive's bytes still to open); also the split import of one JSON file
//! in two parts ([`import_in_two`]).

use std::io::Write;

use flate2::write::MultiGzDecoder;

use super::format::{self, sniff, Format, Sniffed, DECIDE_BYTES};
use super::{builder, chrome, neuron, neuron_device, part, perfetto, rocprof, xplane};
use crate::error::ImportError;
use crate::model::Trace;
use crate::warnings;

/// Limits the caller sets.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// Stop with [`ImportError::TooLarge`] once this many bytes of JSON have
    /// come out of the decompressor (or were pushed uncompressed).
    pub max_json_bytes: u64,
    /// The caller keeps the input and can read any byte range of it again:
    /// for plain (uncompressed) Chrome JSON, the args text of device events
    /// and runtime calls is then not copied into the model
    /// ([`Trace::args_in_source`]); it is read back from each event's
    /// `source` range when shown ([`event_args`](super::event_args)). Compressed and translated
    /// inputs (gzip, Perfetto, Neuron) keep their args text either way.
    pub args_in_source: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            max_json_bytes: 16 << 30,
            args_in_source: false,
        }
    }
}

/// A Perfetto trace's bytes per slice, for sizing the columns (an estimate
/// on the dense side: over-reserving costs address space, not memory).
const PERFETTO_BYTES_PER_SLICE: u64 = 48;

/// A Neuron system profile's bytes per event (its events carry a dozen or
/// more fields), for sizing the columns.
const NEURON_BYTES_PER_EVENT: u64 = 300;

/// How many bytes of a new chunk are first appended to an event held from
/// the chunk before (more only when the held bytes are longer).
const COMPLETE_WINDOW: usize = 64 << 10;

/// What a part importer parsed ([`Importer::finish_parsed_part`]), held in
/// memory until it is merged or encoded.
pub struct ParsedPart {
    parser: chrome::ChromeParser,
    span: part::Span,
    rest: Vec<u8>,
}

impl ParsedPart {
    /// The bytes [`Importer::absorb_part`] takes.
    pub fn encode(&self) -> Vec<u8> {
        part::encode(
            &self.parser.b,
            self.parser.position(),
            self.span,
            &self.rest,
        )
    }
}

/// How the part of a two-part import reaches the importer of the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartCarry {
    /// Parsed after the start, on this thread, and merged through its
    /// encoding — exactly what the browser's two workers do (tests and the
    /// fuzzer check this path).
    Encoded,
    /// Parsed on a second thread while this one parses the start, merged
    /// in memory (the native import of a large file).
    #[cfg(not(target_arch = "wasm32"))]
    Thread,
}

/// The outcome of [`import_in_two`].
pub struct TwoPartImport {
    pub trace: Trace,
    /// The part was merged; `false`: the start's importer read those bytes
    /// itself (the model is the same either way).
    pub merged: bool,
}

/// Imports plain trace JSON held in memory as two parts: the bytes before
/// `cut` (which should be an [`event_boundary`](super::event_boundary)) and the bytes from it on,
/// each parsed by its own importer, then merged. Whatever the cut, the
/// model is the sequential import's: where the part cannot be merged (not
/// plain JSON in its event list, a cut inside an event, a `B` open across
/// it, an `E` whose `B` lies before it), the first importer reads the rest
/// itself. `chunk`: the size of the pushes (as a reader would feed them).
pub fn import_in_two(
    bytes: &[u8],
    cut: usize,
    opts: ImportOptions,
    carry: PartCarry,
    chunk: usize,
) -> Result<TwoPartImport, ImportError> {
    let cut = cut.min(bytes.len());
    let chunk = chunk.max(1);
    let push_all = |imp: &mut Importer, b: &[u8]| b.chunks(chunk).try_for_each(|c| imp.push(c));
    let parse_part = |bare: bool| -> Option<ParsedPart> {
        let mut part = Importer::for_part(opts, bare, cut as u64);
        part.set_size_hint((bytes.len() - cut) as u64);
        push_all(&mut part, &bytes[cut..]).ok()?;
        part.finish_parsed_part().ok()
    };
    let mut first = Importer::new(opts);
    first.set_size_hint(cut as u64);
    let merged = match carry {
        PartCarry::Encoded => {
            push_all(&mut first, &bytes[..cut])?;
            match first.plain_event_list() {
                Some(bare) => match parse_part(bare) {
                    Some(part) => first.absorb_part(&part.encode())?,
                    None => false,
                },
                None => false,
            }
        }
        #[cfg(not(target_arch = "wasm32"))]
        PartCarry::Thread => {
            let bare = bytes
                .iter()
                .find(|c| !c.is_ascii_whitespace() && !matches!(c, 0xEF | 0xBB | 0xBF))
                == Some(&b'[');
            let (pushed, part) = std::thread::scope(|scope| {
                let second = scope.spawn(|| parse_part(bare));
                let pushed = push_all(&mut first, &bytes[..cut]);
                (pushed, second.join().ok().flatten())
            });
            pushed?;
            match part {
                Some(part) => first.absorb_parsed(part)?,
                None => false,
            }
        }
    };
    if !merged {
        push_all(&mut first, &bytes[cut..])?;
    }
    // Only plain JSON is split; an archive here would be a caller's
    // mistake, named rather than opened (which would link Parquet, zip and
    // tar into the browser's import worker).
    let trace = match first.finish_or_archive()? {
        Finished::Trace(t) => *t,
        Finished::Archive(_) => {
            return Err(ImportError::NotATrace {
                reason: "an archive or a Parquet table is not imported in two parts".into(),
            })
        }
    };
    Ok(TwoPartImport { trace, merged })
}

/// Incremental importer: [`Importer::push`] bytes as they arrive, then
/// [`Importer::finish`].
pub struct Importer {
    pub(super) opts: ImportOptions,
    mode: Mode,
    head: Vec<u8>,
    parser: chrome::ChromeParser,
    /// Uncompressed bytes not yet consumed by the parser.
    pending: Vec<u8>,
    json_bytes: u64,
    input_bytes: u64,
    /// Don't re-parse `pending` before it holds this many bytes.
    retry_at: usize,
    /// The expected size of the input (`set_size_hint`), 0 if unknown.
    size_hint: u64,
    failed: Option<ImportError>,
    /// The first JSON bytes, held until they say which JSON format this is.
    undecided: Option<Vec<u8>>,
    /// A Neuron system profile, streamed.
    neuron: Option<neuron::NeuronReader>,
    /// A Neuron runtime trace (`nrt_sys_trace_fetch_events`), streamed.
    fetch: Option<neuron::fetch::FetchReader>,
    /// A Perfetto trace: packets translated as they arrive.
    perfetto: Option<perfetto::PerfettoReader>,
    /// An XPlane profile: planes translated as they arrive.
    xplane: Option<xplane::XPlaneReader>,
    /// rocprofv3 JSON: records translated as they arrive.
    rocprof: Option<rocprof::RocprofReader>,
    /// An archive or a Parquet table: its bytes, read whole at the end.
    archive: Option<Vec<u8>>,
    /// The caller opens archives and snapshots from the file itself
    /// ([`Importer::leave_archives`]): none of their bytes are kept.
    leave_archives: bool,
    /// Set for an importer of a later part of a file: where it starts.
    part_start: Option<(u64, bool)>,
    /// A Neuron profile read beside this PyTorch trace file: its copies of
    /// the trace's ops are left out ([`run`]).
    pub(super) superseded_source: Option<String>,
}

enum Mode {
    Sniffing,
    Plain,
    Gzip(Box<MultiGzDecoder<Vec<u8>>>),
}

/// rocprofv3 JSON bytes per record (a kernel dispatch's ~400; the file's
/// kernel symbols take a share), for sizing the model.
const ROCPROF_BYTES_PER_RECORD: u64 = 800;

/// Compressed bytes handed to the inflater at a time, so its output stays small.
const GZ_STEP: usize = 64 << 10;

impl Importer {
    pub fn new(opts: ImportOptions) -> Self {
        Importer {
            opts,
            mode: Mode::Sniffing,
            head: Vec::new(),
            parser: chrome::ChromeParser::new(),
            pending: Vec::new(),
            json_bytes: 0,
            input_bytes: 0,
            retry_at: 0,
            size_hint: 0,
            failed: None,
            undecided: Some(Vec::new()),
            neuron: None,
            fetch: None,
            perfetto: None,
            xplane: None,
            rocprof: None,
            archive: None,
            leave_archives: false,
            part_start: None,
            superseded_source: None,
        }
    }

    /// Tells the importer roughly how many bytes of JSON to expect, so the
    /// model's columns are allocated once instead of grown by copying.
    pub fn set_size_hint(&mut self, json_bytes: u64) {
        self.size_hint = json_bytes;
        self.parser.b.reserve_for(json_bytes);
    }

    /// The caller reads an archive, a lone Parquet table or an allocator
    /// snapshot from the file itself once [`Importer::holds_archive`] says
    /// this is one (the browser's decoder worker reads the `Blob` a chunk at
    /// a time): their bytes are not gathered here, and
    /// [`Importer::finish_or_archive`] gives back none of them.
    pub fn leave_archives(&mut self) {
        self.leave_archives = true;
    }

    /// Whether the input was recognised as an archive, a lone Parquet
    /// table or an allocator snapshot (opened whole, not streamed here).
    pub fn holds_archive(&self) -> bool {
        self.archive.is_some()
    }

    /// Bytes of the file pushed so far.
    pub fn bytes_in(&self) -> u64 {
        self.input_bytes
    }

    /// Feeds the next chunk of the file.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), ImportError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.push_inner(chunk);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn push_inner(&mut self, chunk: &[u8]) -> Result<(), ImportError> {
        self.input_bytes += chunk.len() as u64;
        if let Mode::Sniffing = self.mode {
            // A first chunk that decides the format on its own is read where
            // it lies (not copied into `head`: a whole file, in `import_bytes`).
            let own =
                self.head.is_empty() && (chunk.len() >= 4096 || sniff(chunk) != Sniffed::Unknown);
            if !own {
                self.head.extend_from_slice(chunk);
            }
            let head: &[u8] = if own { chunk } else { &self.head };
            match sniff(head) {
                Sniffed::Unknown if head.len() < 4096 => return Ok(()),
                Sniffed::Unknown => {}
                Sniffed::Gzip => self.mode = Mode::Gzip(Box::new(MultiGzDecoder::new(Vec::new()))),
                Sniffed::Json
                | Sniffed::Perfetto
                | Sniffed::XPlane
                | Sniffed::Archive
                | Sniffed::Pickle => self.mode = Mode::Plain,
                Sniffed::Other(what) => {
                    return Err(ImportError::NotJson {
                        detected: what.to_string(),
                    })
                }
            }
            if let Mode::Sniffing = self.mode {
                self.mode = Mode::Plain;
            }
            if own {
                return self.dispatch(chunk);
            }
            let head = std::mem::take(&mut self.head);
            return self.dispatch(&head);
        }
        self.dispatch(chunk)
    }

    fn dispatch(&mut self, chunk: &[u8]) -> Result<(), ImportError> {
        match &mut self.mode {
            Mode::Gzip(_) => {
                for piece in chunk.chunks(GZ_STEP) {
                    let out = {
                        let Mode::Gzip(dec) = &mut self.mode else {
                            unreachable!()
                        };
                        dec.write_all(piece).map_err(|e| ImportError::BadGzip {
                            message: e.to_string(),
                        })?;
                        std::mem::take(dec.get_mut())
                    };
                    self.json(&out, false)?;
                }
                Ok(())
            }
            _ => self.json(chunk, false),
        }
    }

    fn json(&mut self, data: &[u8], last: bool) -> Result<(), ImportError> {
        self.json_bytes += data.len() as u64;
        if self.json_bytes > self.opts.max_json_bytes {
            return Err(ImportError::TooLarge {
                limit_bytes: self.opts.max_json_bytes,
            });
        }
        if let Some(reader) = &mut self.neuron {
            return reader.push(data, &mut self.parser.b);
        }
        if let Some(reader) = &mut self.fetch {
            return reader.push(data, &mut self.parser.b);
        }
        if let Some(reader) = &mut self.perfetto {
            return reader.push(data, &mut self.parser.b);
        }
        if let Some(reader) = &mut self.xplane {
            return reader.push(data, &mut self.parser.b);
        }
        if let Some(reader) = &mut self.rocprof {
            return reader.push(data, &mut self.parser.b);
        }
        if let Some(bytes) = &mut self.archive {
            if !self.leave_archives {
                bytes.extend_from_slice(data);
            }
            return Ok(());
        }
        if let Some(head) = &mut self.undecided {
            // Enough bytes in one piece decide where they lie (no copy).
            if head.is_empty() && data.len() >= DECIDE_BYTES {
                self.undecided = None;
                return self.decide(data, last);
            }
            head.extend_from_slice(data);
            if head.len() < DECIDE_BYTES && !last {
                return Ok(());
            }
            let head = self.undecided.take().unwrap_or_default();
            return self.decide(&head, last);
        }
        self.chrome(data, last)
    }

    /// Looks at the first JSON bytes: a Neuron system profile is held
    /// whole; anything else streams into the Chrome parser.
    fn decide(&mut self, head: &[u8], last: bool) -> Result<(), ImportError> {
        match format::of(head) {
            Some(Format::NeuronMapping) => {
                return Err(ImportError::NotATrace {
                    reason: format::MAPPING_ALONE.into(),
                })
            }
            Some(Format::NeuronSummary) => {
                return Err(ImportError::NotATrace {
                    reason: format::SUMMARY_ALONE.into(),
                })
            }
            Some(Format::MemoryTimeline) => {
                return Err(ImportError::NotATrace {
                    reason: format::MEMORY_TIMELINE_ALONE.into(),
                })
            }
            // A snapshot pickle is decoded whole where its reader lives,
            // like an archive (natively by `finish`, in the browser by the
            // decoder worker).
            Some(Format::Archive | Format::MemorySnapshot) if self.leave_archives => {
                self.archive = Some(Vec::new());
            }
            Some(Format::Archive | Format::MemorySnapshot) => {
                let mut bytes = Vec::with_capacity(self.size_hint.min(1 << 32) as usize);
                bytes.extend_from_slice(head);
                self.archive = Some(bytes);
            }
            Some(Format::NeuronFetch) => {
                self.neuron_args(NEURON_BYTES_PER_EVENT * 2);
                let mut reader = neuron::fetch::FetchReader::default();
                reader.push(head, &mut self.parser.b)?;
                self.fetch = Some(reader);
            }
            Some(Format::NeuronSystem) => {
                self.neuron_args(NEURON_BYTES_PER_EVENT);
                let mut reader = neuron::NeuronReader::default();
                reader.supersede(self.superseded_source.clone());
                reader.push(head, &mut self.parser.b)?;
                self.neuron = Some(reader);
            }
            Some(Format::Perfetto) => {
                if let Sniffed::Other(what) = sniff(head) {
                    return Err(ImportError::NotJson {
                        detected: what.to_string(),
                    });
                }
                // Its args can never be read back from the file (the model's
                // source ranges are of no JSON text): keep every event's.
                self.parser.b.keep_op_args = true;
                // Protobuf events are denser than JSON ones (~50 bytes, not 250).
                self.parser.b.reserve_slices(
                    (self.size_hint / PERFETTO_BYTES_PER_SLICE).min(64 << 20) as usize,
                );
                let mut reader = perfetto::PerfettoReader::default();
                reader.push(head, &mut self.parser.b)?;
                self.perfetto = Some(reader);
            }
            Some(Format::Rocprof) => {
                self.neuron_args(ROCPROF_BYTES_PER_RECORD);
                let mut reader = rocprof::RocprofReader::default();
                reader.push(head, &mut self.parser.b)?;
                self.rocprof = Some(reader);
            }
            Some(Format::XPlane) => {
                self.parser.b.keep_op_args = true;
                // No columns sized by the file's size: each plane reserves
                // its own events' rows once it is whole.
                let mut reader = xplane::XPlaneReader::expecting(self.size_hint);
                reader.push(head, &mut self.parser.b)?;
                self.xplane = Some(reader);
            }
            // Chrome JSON, and whatever no reader recognises: the Chrome
            // parser says what is wrong with it. Its source ranges are
            // ranges of the caller's input when that is plain JSON.
            Some(Format::ChromeJson) | None => {
                self.parser.b.args_in_source =
                    self.opts.args_in_source && matches!(self.mode, Mode::Plain);
                return self.chrome(head, last);
            }
        }
        Ok(())
    }

    /// Sizes the model for a Neuron JSON file, whose args can never be
    /// read back from it: every event's are kept (all its fields: about
    /// the file's size, and what the joins add — the logical executions,
    /// the keys that joined — reserved once rather than grown by doubling,
    /// which held both copies for a moment; capacity never written is
    /// never resident).
    fn neuron_args(&mut self, bytes_per_event: u64) {
        self.parser.b.keep_op_args = true;
        let b = &mut self.parser.b;
        let hint = self.size_hint.min(1 << 32);
        b.trace.args_arena.reserve((hint + hint / 4) as usize);
        b.reserve_slices((self.size_hint / bytes_per_event).min(64 << 20) as usize);
    }

    fn chrome(&mut self, data: &[u8], last: bool) -> Result<(), ImportError> {
        if self.pending.is_empty() {
            let used = self.parser.feed(data, last)?;
            self.pending.extend_from_slice(&data[used..]);
            return Ok(());
        }
        // Bytes are held from the last chunk (an event cut off at its end).
        // Complete that event with the first bytes of this chunk, then parse
        // the rest of the chunk where it lies: a chunk is not copied whole
        // behind the held bytes (measured: that copy was every byte of a
        // chunked import, once more).
        let held = self.pending.len();
        if self.retry_at == 0 && data.len() > COMPLETE_WINDOW {
            let window = held.max(COMPLETE_WINDOW).min(data.len());
            self.pending.extend_from_slice(&data[..window]);
            let used = self.parser.feed(&self.pending, false)?;
            if used >= held {
                self.pending.clear();
                return self.chrome(&data[used - held..], last);
            }
            // An event longer than the window: hold the whole chunk after all.
            self.pending.drain(..used);
            self.pending.extend_from_slice(&data[window..]);
        } else {
            self.pending.extend_from_slice(data);
        }
        // An event larger than the chunks is re-parsed from its start on
        // every chunk; waiting until the held bytes double keeps the total
        // work linear in the file size.
        if !last && self.pending.len() < self.retry_at {
            return Ok(());
        }
        let used = self.parser.feed(&self.pending, last)?;
        self.pending.drain(..used);
        self.retry_at = if used == 0 { self.pending.len() * 2 } else { 0 };
        Ok(())
    }

    /// `Some(bare)` once the input is known to be plain (uncompressed)
    /// Chrome trace JSON and the parser is inside its event list (`bare`: the
    /// file is a bare array). Only then can a later part of the file be
    /// parsed elsewhere ([`Importer::for_part`]) and merged back.
    pub fn plain_event_list(&self) -> Option<bool> {
        let plain = matches!(self.mode, Mode::Plain)
            && self.failed.is_none()
            && self.undecided.is_none()
            && self.neuron.is_none()
            && self.fetch.is_none()
            && self.perfetto.is_none()
            && self.xplane.is_none()
            && self.rocprof.is_none();
        match self.parser.state {
            chrome::State::Events { bare } if plain => Some(bare),
            _ => None,
        }
    }

    /// An importer for the part of a plain Chrome-JSON file that starts at
    /// byte `start`, where an event of the event list begins (see
    /// [`event_boundary`](super::event_boundary)). Push the part's bytes, then
    /// [`Importer::finish_part`].
    pub fn for_part(opts: ImportOptions, bare: bool, start: u64) -> Importer {
        let mut imp = Importer::new(opts);
        imp.mode = Mode::Plain;
        imp.undecided = None;
        imp.parser = chrome::ChromeParser::in_events(bare, start);
        imp.parser.b.args_in_source = opts.args_in_source;
        imp.part_start = Some((start, bare));
        imp
    }

    /// Ends a part's input; the bytes are what [`Importer::absorb_part`]
    /// takes (the part's encoding, to cross to another thread or worker).
    pub fn finish_part(self) -> Result<Vec<u8>, ImportError> {
        Ok(self.finish_parsed_part()?.encode())
    }

    /// Ends a part's input, keeping what it parsed in memory (to merge on
    /// the same thread or a thread that shares memory: [`Importer::absorb_parsed`]).
    pub fn finish_parsed_part(mut self) -> Result<ParsedPart, ImportError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let Some((start, bare)) = self.part_start else {
            return Err(ImportError::NotATrace {
                reason: "internal: finish_part on an importer that is not a part".into(),
            });
        };
        let mut rest = std::mem::take(&mut self.pending);
        let used = self.parser.feed(&rest, true)?;
        rest.drain(..used.min(rest.len()));
        Ok(ParsedPart {
            span: part::Span {
                start,
                bare,
                json_bytes: self.json_bytes,
            },
            parser: self.parser,
            rest,
        })
    }

    /// Merges a part parsed elsewhere ([`Importer::finish_part`]) that starts
    /// exactly where this importer's input ends. Returns `false`, changing
    /// nothing, when it cannot be merged — the part does not start here, this
    /// importer stopped inside an event or with a `B` open, the part met an
    /// `E` whose `B` lies before it, or the bytes are not a part — and the
    /// caller then pushes those bytes of the file itself. A merged import is
    /// the same model the sequential import builds.
    pub fn absorb_part(&mut self, part: &[u8]) -> Result<bool, ImportError> {
        if !self.can_absorb() {
            return Ok(false);
        }
        let Some(p) = part::decode(part) else {
            return Ok(false);
        };
        let Some(later) = chrome::ChromeParser::resume(p.builder, p.at) else {
            return Ok(false);
        };
        self.absorb_checked(later, p.span, p.rest, Some(p.raw))
    }

    /// [`Importer::absorb_part`] of a part kept in memory.
    pub fn absorb_parsed(&mut self, part: ParsedPart) -> Result<bool, ImportError> {
        if !self.can_absorb() {
            return Ok(false);
        }
        self.absorb_checked(part.parser, part.span, part.rest, None)
    }

    /// This importer stands between two events of a plain JSON event list.
    fn can_absorb(&self) -> bool {
        self.plain_event_list().is_some()
            && self.pending.iter().all(|c| c.is_ascii_whitespace())
            && self.parser.between_events()
    }

    fn absorb_checked(
        &mut self,
        later: chrome::ChromeParser,
        span: part::Span,
        rest: Vec<u8>,
        raw: Option<part::RawColumns>,
    ) -> Result<bool, ImportError> {
        if Some(span.bare) != self.plain_event_list()
            || span.start != self.json_bytes
            || later.needs_earlier_context()
            || later.b.args_in_source != self.parser.b.args_in_source
        {
            return Ok(false);
        }
        self.json_bytes += span.json_bytes;
        self.input_bytes += span.json_bytes;
        if self.json_bytes > self.opts.max_json_bytes {
            let e = ImportError::TooLarge {
                limit_bytes: self.opts.max_json_bytes,
            };
            self.failed = Some(e.clone());
            return Err(e);
        }
        self.parser.absorb_with(later, raw);
        self.pending = rest;
        Ok(true)
    }

    /// Ends the input: the model, or the bytes of an archive (or a lone
    /// Parquet table) still to be opened ([`unpack`](super::unpack), then
    /// [`neuron_device::import_profile`] or [`import_unpacked`]). A caller
    /// that never opens archives itself — the browser's import worker,
    /// which hands them to the decoder worker — links neither the
    /// `parquet` crate nor the zip and tar readers.
    pub fn finish_or_archive(mut self) -> Result<Finished, ImportError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Mode::Sniffing = self.mode {
            let head = std::mem::take(&mut self.head);
            if head.iter().all(|c| c.is_ascii_whitespace()) {
                return Err(ImportError::Empty);
            }
            self.mode = Mode::Plain;
            self.dispatch(&head)?;
        }
        if let Mode::Gzip(dec) = &mut self.mode {
            let fin = dec.try_finish();
            let out = std::mem::take(dec.get_mut());
            if let Err(e) = fin {
                // Keep what inflated; the parser reports the JSON as truncated.
                self.parser
                    .b
                    .diag
                    .warn(warnings::GZIP_TRUNCATED, || e.to_string());
            }
            self.json(&out, false)?;
        }
        if let Some(head) = self.undecided.take() {
            self.decide(&head, false)?;
        }
        let gzip = matches!(self.mode, Mode::Gzip(_));
        if let Some(bytes) = self.archive.take() {
            return Ok(Finished::Archive(bytes));
        }
        if let Some(reader) = self.neuron.take() {
            let b = self.parser.b;
            return finish_neuron(|b| reader.finish(b), b, self.json_bytes, gzip, false)
                .map(|t| Finished::Trace(Box::new(t)));
        }
        if let Some(reader) = self.fetch.take() {
            let b = self.parser.b;
            return finish_neuron(|b| reader.finish(b), b, self.json_bytes, gzip, true)
                .map(|t| Finished::Trace(Box::new(t)));
        }
        if let Some(reader) = self.perfetto.take() {
            let summary = format!(
                "Perfetto timestamps are nanoseconds on the trace's clock; {} packets, {} track events",
                reader.packets, reader.track_events
            );
            let mut b = self.parser.b;
            reader.finish(&mut b);
            neuron_device::mark_device_lanes(&mut b);
            b.diag.bytes_read = self.json_bytes;
            b.diag.format = if gzip {
                "Perfetto protobuf trace (gzip)".into()
            } else {
                "Perfetto protobuf trace".into()
            };
            let mut t = b.finish();
            t.diagnostics.time_unit_decision = summary;
            return Ok(Finished::Trace(Box::new(t)));
        }
        if let Some(reader) = self.rocprof.take() {
            let mut b = self.parser.b;
            let summary = reader.finish(&mut b)?;
            b.diag.bytes_read = self.json_bytes;
            b.diag.format = if gzip {
                "rocprofv3 JSON (gzip)".into()
            } else {
                "rocprofv3 JSON".into()
            };
            let mut t = b.finish();
            t.diagnostics.time_unit_decision = summary;
            return Ok(Finished::Trace(Box::new(t)));
        }
        if let Some(reader) = self.xplane.take() {
            let summary = format!(
                "XPlane times are picoseconds (line timestamp_ns × 1000 + offset_ps), shown in nanoseconds; {} planes",
                reader.planes()
            );
            let mut b = self.parser.b;
            reader.finish(&mut b);
            b.diag.bytes_read = self.json_bytes;
            b.diag.format = if gzip {
                "XPlane profile (gzip)".into()
            } else {
                "XPlane profile".into()
            };
            let mut t = b.finish();
            t.diagnostics.time_unit_decision = summary;
            return Ok(Finished::Trace(Box::new(t)));
        }
        let rest = std::mem::take(&mut self.pending);
        let used = self.parser.feed(&rest, true)?;
        let json_bytes = self.json_bytes;
        let mut parser = self.parser;
        parser.b.diag.bytes_read = json_bytes;
        parser.b.diag.format = if gzip {
            "Chrome trace JSON (gzip)".into()
        } else {
            "Chrome trace JSON".into()
        };
        parser
            .finish(&rest[used.min(rest.len())..])
            .map(|t| Finished::Trace(Box::new(t)))
    }
}

/// A snapshot pickle held whole ([`Finished::Archive`]) into its trace.
/// The browser's import worker has no pickle decoder (it would cost its
/// download, and runs at opt-level "s" at 72 MB/s): there the decoder
/// worker decodes snapshots ([`super::unpack`]) and never hands one on as
/// a file.
pub(crate) fn snapshot_trace(bytes: &[u8]) -> Result<Trace, ImportError> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let snap = crate::memory_snapshot::read(bytes).map_err(super::snapshot::error)?;
        Ok(super::snapshot::trace_of(snap))
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = bytes;
        Err(ImportError::NotATrace {
            reason: "an allocator snapshot inside an archive's one file: the decoder worker reads snapshots, this worker does not".into(),
        })
    }
}

/// What an import ends with ([`Importer::finish_or_archive`]).
#[derive(Debug)]
pub enum Finished {
    Trace(Box<Trace>),
    /// A zip or tar archive, or a lone Parquet table, not yet opened.
    Archive(Vec<u8>),
}

/// Imports the one file of an archive ([`Unpacked::File`](super::Unpacked::File)). Its args are
/// kept in the model whatever `opts` say: the file the caller holds is the
/// archive, whose byte ranges are not this file's.
pub fn import_unpacked(file: &[u8], opts: ImportOptions) -> Result<Trace, ImportError> {
    let opts = ImportOptions {
        args_in_source: false,
        ..opts
    };
    match pushed_whole(file, opts)?.finish_or_archive()? {
        Finished::Trace(t) => Ok(*t),
        Finished::Archive(b) if crate::memory_snapshot::looks_like(&b) => snapshot_trace(&b),
        Finished::Archive(_) => Err(ImportError::NotATrace {
            reason: "an archive inside an archive; extract the outer one".into(),
        }),
    }
}

/// A Neuron system profile or runtime trace, streamed into the builder
/// (see [`neuron`]); `finish` ends its reader.
fn finish_neuron(
    finish: impl FnOnce(&mut builder::Builder) -> Result<neuron::NeuronCounts, ImportError>,
    mut b: builder::Builder,
    json_bytes: u64,
    gzip: bool,
    fetched: bool,
) -> Result<Trace, ImportError> {
    let counts = finish(&mut b)?;
    if counts.events == 0 {
        return Err(ImportError::NotATrace {
            reason: if fetched {
                "a Neuron runtime trace (nrt_sys_trace_fetch_events) with no complete record".into()
            } else {
                neuron::no_events_reason(&counts)
            },
        });
    }
    b.diag.bytes_read = json_bytes;
    let what = if fetched {
        "Neuron runtime trace JSON (nrt_sys_trace_fetch_events)"
    } else {
        "Neuron Explorer system profile JSON"
    };
    b.diag.format = if gzip {
        format!("{what} (gzip)")
    } else {
        what.into()
    };
    let summary = neuron::report(&counts, &mut b.diag);
    let mut t = b.finish();
    t.diagnostics.time_unit_decision = summary;
    Ok(t)
}

/// An importer given a whole file, its columns sized for it.
pub(super) fn pushed_whole(bytes: &[u8], opts: ImportOptions) -> Result<Importer, ImportError> {
    let mut imp = Importer::new(opts);
    let last4 = bytes.get(bytes.len().saturating_sub(4)..);
    imp.set_size_hint(json_size_estimate(
        bytes.len() as u64,
        &bytes[..bytes.len().min(8)],
        last4,
    ));
    imp.push(bytes)?;
    Ok(imp)
}

/// Expected JSON size of a file from its length, first bytes and last four
/// bytes (gzip's ISIZE trailer: the inflated size modulo 2^32). Deflate
/// cannot expand more than ~1032×, so a larger claim is not believed.
pub fn json_size_estimate(file_len: u64, head: &[u8], last4: Option<&[u8]>) -> u64 {
    if sniff(head) != Sniffed::Gzip {
        return file_len;
    }
    match last4 {
        Some(&[a, b, c, d]) => {
            let isize = u32::from_le_bytes([a, b, c, d]) as u64;
            if isize >= file_len && isize <= file_len.saturating_mul(1032) {
                isize
            } else {
                file_len.saturating_mul(8)
            }
        }
        _ => file_len.saturating_mul(8),
    }
}
