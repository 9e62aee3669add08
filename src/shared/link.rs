//! A link that reopens a view: everything the page shows, written in the
//! URL's hash as `key=value` pairs (form-urlencoded) with a version, and
//! read back through upgraders from every older version (the Firefox
//! Profiler's scheme). Pure: the page builds a [`Link`] from its state and
//! applies one; this module only writes and reads the text.
//!
//! Version 0 is the link tracelane wrote before hashes: `?url=TRACE` in the
//! query, opening that trace on its op table. Version 1 is the hash below.
//! A link from a newer tracelane keeps what this version understands (the
//! traces, the tab, the view) and says what it left out.

use tracelane_core::analysis::Scope;
use tracelane_core::export::Column;

/// The version [`Link::to_hash`] writes.
pub const VERSION: u32 = 1;

/// Where one of the link's traces comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceRef {
    /// Fetched by the browser from this URL (`?url=`, a team library).
    Url(String),
    /// One of the built-in demo traces, by file name.
    Demo(String),
    /// A file the sender opened from their disk: never uploaded, so the
    /// receiver must drop a copy of it.
    File(String),
}

impl TraceRef {
    fn encode(&self) -> String {
        match self {
            TraceRef::Url(u) => format!("u:{u}"),
            TraceRef::Demo(n) => format!("d:{n}"),
            TraceRef::File(n) => format!("f:{n}"),
        }
    }

    fn decode(s: &str) -> Option<TraceRef> {
        let (kind, rest) = s.split_once(':')?;
        Some(match kind {
            "u" => TraceRef::Url(rest.into()),
            "d" => TraceRef::Demo(rest.into()),
            "f" => TraceRef::File(rest.into()),
            _ => return None,
        })
    }

    /// The file name the receiver sees.
    pub fn name(&self) -> &str {
        match self {
            TraceRef::Url(u) => u.rsplit('/').next().unwrap_or(u),
            TraceRef::Demo(n) | TraceRef::File(n) => n,
        }
    }
}

/// Which view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    #[default]
    Table,
    Timeline,
    Analyses,
    Engines,
    Roofline,
    Compare,
    Ranks,
    Summary,
    Memory,
}

impl View {
    const ALL: [(View, &'static str); 9] = [
        (View::Table, "table"),
        (View::Timeline, "timeline"),
        (View::Analyses, "analyses"),
        (View::Engines, "engines"),
        (View::Roofline, "roofline"),
        (View::Compare, "compare"),
        (View::Ranks, "ranks"),
        (View::Summary, "summary"),
        (View::Memory, "memory"),
    ];

    pub fn key(self) -> &'static str {
        View::ALL
            .iter()
            .find(|(v, _)| *v == self)
            .map_or("table", |x| x.1)
    }

    pub fn from_key(k: &str) -> Option<View> {
        View::ALL.iter().find(|(_, s)| *s == k).map(|x| x.0)
    }

    /// A view of one trace (not the comparison or the ranks).
    pub fn of_trace(self) -> bool {
        !matches!(self, View::Compare | View::Ranks)
    }
}

/// The op table's sort, filter, grouping and cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableState {
    pub query: String,
    pub regex: bool,
    pub by_shape: bool,
    pub device_rows: bool,
    /// Rows shown (0: all).
    pub top: usize,
    /// Column and descending; `None`: the table's default.
    pub sort: Option<(Column, bool)>,
}

impl Default for TableState {
    fn default() -> TableState {
        TableState {
            query: String::new(),
            regex: false,
            by_shape: false,
            device_rows: true,
            top: 0,
            sort: None,
        }
    }
}

/// What one trace's views show (the page keeps one per open trace).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceState {
    /// The timeline's visible window (trace clock, ns).
    pub window: Option<(i64, i64)>,
    /// The selected slice (the model's slice index).
    pub selection: Option<u32>,
    /// The selected time range (trace clock, ns).
    pub range: Option<(i64, i64)>,
    /// The timeline's search text.
    pub search: String,
    pub table: TableState,
    /// The scope of the analyses, engines and roofline views.
    pub scope: Scope,
}

/// A whole view, as a link carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// The open traces in tab order.
    pub traces: Vec<TraceRef>,
    /// The shown trace (an index into `traces`).
    pub tab: usize,
    pub view: View,
    /// The shown trace's views.
    pub state: TraceState,
    /// The comparison's variants, the baseline first: (index into
    /// `traces`, region).
    pub variants: Vec<(usize, Scope)>,
    /// The comparison aligned by structure (`None`: side by side).
    pub align: Option<AlignState>,
}

/// The comparison's "align by structure": which candidate is aligned
/// against the baseline, and the aligned node selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlignState {
    /// An index into the variants (1: the first candidate).
    pub candidate: usize,
    /// The aligned node (`tracelane diff`'s node id).
    pub node: Option<u32>,
}

/// A link read back, with what could not be kept from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    pub link: Link,
    /// The version it was written in.
    pub version: u32,
    /// Plain sentences: parts this version could not read.
    pub dropped: Vec<String>,
}

fn pair(a: i64, b: i64) -> String {
    format!("{a}_{b}")
}

fn parse_pair(s: &str) -> Option<(i64, i64)> {
    let (a, b) = s.split_once('_')?;
    let (a, b) = (a.parse().ok()?, b.parse().ok()?);
    (b >= a).then_some((a, b))
}

/// `whole`, `step:N`, `region:NAME`, `range:A_B` (the CLI's `--scope`
/// words where they overlap).
pub fn scope_key(s: &Scope) -> String {
    match s {
        Scope::Whole => "whole".into(),
        Scope::Step { n } => format!("step:{n}"),
        Scope::Region { name } => format!("region:{name}"),
        Scope::Range { start_ns, end_ns } => format!("range:{}", pair(*start_ns, *end_ns)),
    }
}

pub fn scope_from_key(s: &str) -> Option<Scope> {
    if s == "whole" {
        return Some(Scope::Whole);
    }
    let (kind, rest) = s.split_once(':')?;
    Some(match kind {
        "step" => Scope::Step {
            n: rest.parse().ok()?,
        },
        "region" => Scope::Region { name: rest.into() },
        "range" => {
            let (start_ns, end_ns) = parse_pair(rest)?;
            Scope::Range { start_ns, end_ns }
        }
        _ => return None,
    })
}

impl Link {
    /// The hash, `#` included: only what differs from the defaults.
    pub fn to_hash(&self) -> String {
        let mut out = form_urlencoded::Serializer::new(String::new());
        out.append_pair("v", &VERSION.to_string());
        for t in &self.traces {
            out.append_pair("t", &t.encode());
        }
        if self.tab != 0 {
            out.append_pair("tab", &self.tab.to_string());
        }
        out.append_pair("view", self.view.key());
        let s = &self.state;
        if let Some((a, b)) = s.window {
            out.append_pair("win", &pair(a, b));
        }
        if let Some(k) = s.selection {
            out.append_pair("sel", &k.to_string());
        }
        if let Some((a, b)) = s.range {
            out.append_pair("range", &pair(a, b));
        }
        if !s.search.is_empty() {
            out.append_pair("q", &s.search);
        }
        let t = &s.table;
        if !t.query.is_empty() {
            out.append_pair("filter", &t.query);
        }
        if t.regex {
            out.append_pair("re", "1");
        }
        if t.by_shape {
            out.append_pair("group", "shape");
        }
        if !t.device_rows {
            out.append_pair("dev", "0");
        }
        if t.top != 0 {
            out.append_pair("top", &t.top.to_string());
        }
        if let Some((c, desc)) = t.sort {
            out.append_pair(
                "sort",
                &format!("{}{}", if desc { "-" } else { "" }, c.key()),
            );
        }
        if s.scope != Scope::Whole {
            out.append_pair("scope", &scope_key(&s.scope));
        }
        for (k, scope) in &self.variants {
            out.append_pair("cmp", &format!("{k}~{}", scope_key(scope)));
        }
        if let Some(a) = self.align {
            out.append_pair("align", &a.candidate.to_string());
            if let Some(n) = a.node {
                out.append_pair("anode", &n.to_string());
            }
        }
        format!("#{}", out.finish())
    }

    /// Reads a link from a location's hash and query (either may be
    /// empty, with or without its `#` / `?`). `None`: the location holds
    /// no link (the page opens its demo).
    pub fn parse(hash: &str, query: &str) -> Option<Read> {
        let hash = hash.strip_prefix('#').unwrap_or(hash);
        let query = query.strip_prefix('?').unwrap_or(query);
        let mut pairs: Vec<(String, String)> = form_urlencoded::parse(hash.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let mut version = match pairs.iter().find(|(k, _)| k == "v") {
            Some((_, v)) => v.parse::<u32>().ok()?,
            None => 0,
        };
        if version == 0 {
            pairs = form_urlencoded::parse(query.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if !pairs.iter().any(|(k, _)| k == "url") {
                return None;
            }
        }
        let written = version;
        let mut dropped = Vec::new();
        if version > VERSION {
            dropped.push(format!(
                "the link was made by a newer tracelane (link version {version}); \
                 its traces and view are open, the rest of what it shows may differ"
            ));
        }
        // Each upgrader turns version N's pairs into N + 1's.
        while version < VERSION {
            pairs = UPGRADERS[version as usize](pairs);
            version += 1;
        }
        let mut link = Link::default();
        let mut bad = |key: &str, value: &str| {
            dropped.push(format!("could not read {key}={value}"));
        };
        for (key, value) in &pairs {
            let v = value.as_str();
            let s = &mut link.state;
            let ok = match key.as_str() {
                "v" => true,
                "t" => TraceRef::decode(v).map(|t| link.traces.push(t)).is_some(),
                "tab" => v.parse().map(|k| link.tab = k).is_ok(),
                "view" => View::from_key(v).map(|x| link.view = x).is_some(),
                "win" => parse_pair(v).map(|w| s.window = Some(w)).is_some(),
                "sel" => v.parse().map(|k| s.selection = Some(k)).is_ok(),
                "range" => parse_pair(v).map(|r| s.range = Some(r)).is_some(),
                "q" => {
                    s.search = v.into();
                    true
                }
                "filter" => {
                    s.table.query = v.into();
                    true
                }
                "re" => {
                    s.table.regex = v == "1";
                    true
                }
                "group" => {
                    s.table.by_shape = v == "shape";
                    true
                }
                "dev" => {
                    s.table.device_rows = v != "0";
                    true
                }
                "top" => v.parse().map(|n| s.table.top = n).is_ok(),
                "sort" => {
                    let (desc, k) = match v.strip_prefix('-') {
                        Some(k) => (true, k),
                        None => (false, v),
                    };
                    Column::from_key(k)
                        .map(|c| s.table.sort = Some((c, desc)))
                        .is_some()
                }
                "scope" => scope_from_key(v).map(|x| s.scope = x).is_some(),
                "cmp" => v
                    .split_once('~')
                    .and_then(|(k, scope)| Some((k.parse().ok()?, scope_from_key(scope)?)))
                    .map(|x| link.variants.push(x))
                    .is_some(),
                "align" => v
                    .parse()
                    .map(|k| link.align.get_or_insert_with(Default::default).candidate = k)
                    .is_ok(),
                "anode" => v
                    .parse()
                    .map(|n| link.align.get_or_insert_with(Default::default).node = Some(n))
                    .is_ok(),
                // A newer version's key: said once above.
                _ => true,
            };
            if !ok {
                bad(key, v);
            }
        }
        if link.traces.is_empty() {
            return None;
        }
        let n = link.traces.len();
        if link.tab >= n {
            dropped.push(format!(
                "tab {} of {n} traces: showing the first",
                link.tab + 1
            ));
            link.tab = 0;
        }
        let before = link.variants.len();
        link.variants.retain(|(k, _)| *k < n);
        if link.variants.len() < before {
            dropped.push("comparison variants naming no trace of the link".into());
        }
        if let Some(a) = link.align {
            if a.candidate == 0 || a.candidate >= link.variants.len().max(2) {
                dropped.push(format!(
                    "the aligned candidate {} of {} variants: aligning the first",
                    a.candidate,
                    link.variants.len()
                ));
                link.align = Some(AlignState {
                    candidate: 1,
                    node: a.node,
                });
            }
        }
        Some(Read {
            link,
            version: written,
            dropped,
        })
    }
}

type Pairs = Vec<(String, String)>;

/// `UPGRADERS[n]` reads version `n`'s pairs as version `n + 1`'s.
const UPGRADERS: [fn(Pairs) -> Pairs; VERSION as usize] = [
    // 0 → 1: `?url=A` (the query, before hashes) opened trace A on its op
    // table; `?url=` may be given more than once.
    |pairs| {
        let mut out = vec![("v".to_string(), "1".to_string())];
        out.extend(
            pairs
                .into_iter()
                .filter(|(k, _)| k == "url")
                .map(|(_, u)| ("t".to_string(), format!("u:{u}"))),
        );
        out.push(("view".into(), "table".into()));
        out
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> Link {
        Link {
            traces: vec![
                TraceRef::Url("https://example.org/traces/a b&c.json.gz".into()),
                TraceRef::Demo("rmsnorm_naive_cpu.pt.trace.json.gz".into()),
                TraceRef::File("rank0#1.json".into()),
            ],
            tab: 2,
            view: View::Timeline,
            state: TraceState {
                window: Some((1_700_000_000_000_000_000, 1_700_000_000_123_456_789)),
                selection: Some(4242),
                range: Some((-5, 7)),
                search: "aten::mul & more=1".into(),
                table: TableState {
                    query: "^aten::(mul|add)$".into(),
                    regex: true,
                    by_shape: true,
                    device_rows: false,
                    top: 20,
                    sort: Some((Column::CpuSelf, false)),
                },
                scope: Scope::Region {
                    name: "## forward ##".into(),
                },
            },
            variants: vec![
                (0, Scope::Step { n: 3 }),
                (
                    2,
                    Scope::Range {
                        start_ns: 10,
                        end_ns: 20,
                    },
                ),
                (1, Scope::Whole),
            ],
            align: Some(AlignState {
                candidate: 2,
                node: Some(17),
            }),
        }
    }

    #[test]
    fn every_part_of_a_link_reads_back_equal() {
        let link = full();
        let hash = link.to_hash();
        let read = Link::parse(&hash, "").unwrap();
        assert_eq!(read.link, link);
        assert_eq!(read.version, VERSION);
        assert!(read.dropped.is_empty(), "{:?}", read.dropped);
    }

    #[test]
    fn defaults_are_left_out_of_the_hash() {
        let link = Link {
            traces: vec![TraceRef::Demo("x.json".into())],
            ..Link::default()
        };
        assert_eq!(link.to_hash(), "#v=1&t=d%3Ax.json&view=table");
        assert_eq!(Link::parse(&link.to_hash(), "").unwrap().link, link);
    }

    #[test]
    fn a_version_0_query_link_opens_its_traces_on_the_op_table() {
        let read = Link::parse("", "?url=https%3A%2F%2Fh%2Fa.json&url=b.json.gz").unwrap();
        assert_eq!(read.version, 0);
        assert_eq!(
            read.link.traces,
            vec![
                TraceRef::Url("https://h/a.json".into()),
                TraceRef::Url("b.json.gz".into())
            ]
        );
        assert_eq!(read.link.view, View::Table);
        assert!(read.dropped.is_empty());
    }

    #[test]
    fn a_hash_link_wins_over_the_query() {
        let hash = Link {
            traces: vec![TraceRef::Demo("x.json".into())],
            ..Link::default()
        }
        .to_hash();
        let read = Link::parse(&hash, "?url=other.json").unwrap();
        assert_eq!(read.link.traces, vec![TraceRef::Demo("x.json".into())]);
    }

    #[test]
    fn no_link_in_a_plain_location() {
        assert_eq!(Link::parse("", ""), None);
        assert_eq!(Link::parse("#", "?foo=1"), None);
        // A hash naming no trace is no link.
        assert_eq!(Link::parse("#v=1&view=timeline", ""), None);
    }

    #[test]
    fn a_newer_versions_link_keeps_what_this_version_reads_and_says_so() {
        let read = Link::parse("#v=9&t=d%3Ax.json&view=timeline&lens=flame&sel=3", "").unwrap();
        assert_eq!(read.version, 9);
        assert_eq!(read.link.view, View::Timeline);
        assert_eq!(read.link.state.selection, Some(3));
        assert_eq!(read.dropped.len(), 1, "{:?}", read.dropped);
        assert!(read.dropped[0].contains("newer tracelane"));
    }

    #[test]
    fn broken_parts_are_named_and_the_rest_kept() {
        let read = Link::parse(
            "#v=1&t=d%3Ax.json&t=zz&view=flame&win=9_3&sort=-nope&tab=4&cmp=7~whole&scope=step%3A2",
            "",
        )
        .unwrap();
        assert_eq!(read.link.traces.len(), 1);
        assert_eq!(read.link.tab, 0);
        assert_eq!(read.link.view, View::Table);
        assert_eq!(read.link.state.window, None);
        assert_eq!(read.link.state.scope, Scope::Step { n: 2 });
        assert!(read.link.variants.is_empty());
        // t=zz, view=flame, win=9_3 (end before start), sort=-nope, the tab,
        // the variant.
        assert_eq!(read.dropped.len(), 6, "{:?}", read.dropped);
    }

    #[test]
    fn an_aligned_candidate_naming_no_variant_aligns_the_first() {
        let read = Link::parse(
            "#v=1&t=d%3Aa.json&t=d%3Ab.json&view=compare&cmp=0~whole&cmp=1~whole&align=5&anode=3",
            "",
        )
        .unwrap();
        assert_eq!(
            read.link.align,
            Some(AlignState {
                candidate: 1,
                node: Some(3)
            })
        );
        assert_eq!(read.dropped.len(), 1, "{:?}", read.dropped);
        let bad = Link::parse("#v=1&t=d%3Aa.json&anode=x", "").unwrap();
        assert_eq!(bad.dropped, ["could not read anode=x"]);
    }

    #[test]
    fn scope_keys_read_back() {
        for s in [
            Scope::Whole,
            Scope::Step { n: 12 },
            Scope::Region {
                name: "a:b~c".into(),
            },
            Scope::Range {
                start_ns: -3,
                end_ns: 9,
            },
        ] {
            assert_eq!(scope_from_key(&scope_key(&s)), Some(s));
        }
        assert_eq!(scope_from_key("range:5_1"), None);
    }
}
