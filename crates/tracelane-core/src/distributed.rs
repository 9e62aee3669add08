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
        let int = |v: &serde_json::Value| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        };
        let text = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let d = Distributed {
            backend: v.get("backend").and_then(text),
            rank: v.get("rank").and_then(int),
            world_size: v.get("world_size").and_then(int),
            process_groups: v
                .get("pg_config")
                .and_then(|p| p.as_array())
                .map(|groups| {
                    groups
                        .iter()
                        .map(|g| ProcessGroup {
                            name: g.get("pg_name").and_then(text).unwrap_or_default(),
                            desc: g.get("pg_desc").and_then(text),
                            size: g.get("pg_size").and_then(int),
                            ranks: g
                                .get("ranks")
                                .and_then(|r| r.as_array())
                                .map(|r| r.iter().filter_map(int).collect())
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
