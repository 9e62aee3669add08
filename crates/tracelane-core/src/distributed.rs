//! Which rank of a distributed run a trace is: Kineto's top-level
//! `distributedInfo` (written by `torch.profiler` when `torch.distributed`
//! is initialised: backend, rank, world size, and since PyTorch 2.1 every
//! process group with its ranks).

use serde::{Deserialize, Serialize};

use crate::model::Trace;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distributed {
    pub backend: Option<String>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    /// `pg_config`, in the file's order.
    pub process_groups: Vec<ProcessGroup>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessGroup {
    /// `pg_name` (c10d's id, `"0"` for the default group).
    pub name: String,
    /// `pg_desc` (`default_pg`, or the name given at creation).
    pub desc: Option<String>,
    pub size: Option<i64>,
    /// Global ranks in the group (empty when the file does not list them).
    pub ranks: Vec<i64>,
}

impl Trace {
    /// The trace's `distributedInfo`, if it has one with a rank or a world
    /// size (ids written as numbers or strings both read).
    pub fn distributed(&self) -> Option<Distributed> {
        let (_, raw) = self.header.iter().find(|(k, _)| k == "distributedInfo")?;
        let v: serde_json::Value = serde_json::from_str(raw).ok()?;
        use crate::import::neuron::{integer, text};
        let d = Distributed {
            backend: text(v.get("backend")),
            rank: integer(v.get("rank")),
            world_size: integer(v.get("world_size")),
            process_groups: v
                .get("pg_config")
                .and_then(|p| p.as_array())
                .map(|groups| {
                    groups
                        .iter()
                        .map(|g| ProcessGroup {
                            name: text(g.get("pg_name")).unwrap_or_default(),
                            desc: text(g.get("pg_desc")),
                            size: integer(g.get("pg_size")),
                            ranks: g
                                .get("ranks")
                                .and_then(|r| r.as_array())
                                .map(|r| r.iter().filter_map(|x| integer(Some(x))).collect())
                                .unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        (d.rank.is_some() || d.world_size.is_some()).then_some(d)
    }
}

impl Distributed {
    /// `rank 2 of 4 (gloo); process groups: default_pg [0, 1, 2, 3]`.
    pub fn describe(&self) -> String {
        let n = |v: Option<i64>| v.map_or("?".to_string(), |v| v.to_string());
        let mut s = format!("rank {} of {}", n(self.rank), n(self.world_size));
        if let Some(b) = &self.backend {
            s.push_str(&format!(" ({b})"));
        }
        if !self.process_groups.is_empty() {
            let groups: Vec<String> = self
                .process_groups
                .iter()
                .map(|g| format!("{} {:?}", g.desc.as_deref().unwrap_or(&g.name), g.ranks))
                .collect();
            s.push_str(&format!("; process groups: {}", groups.join(", ")));
        }
        s
    }
}
