//! What the Neuron reader found, counted for the diagnostics.

/// What the translation found, for the diagnostics.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NeuronCounts {
    pub events: u64,
    pub by_source: Vec<(String, u64)>,
    /// Runtime → hardware and framework → runtime joins made by `flow_id`.
    pub flow_links: u64,
    /// … by (process, logical core, `exec_id`, model).
    pub exec_key_links: u64,
    /// … by `nrt_sequence_id` / `nrta_seq_id`.
    pub sequence_links: u64,
    /// Logical executions made of the events of their physical cores.
    pub lnc_executions: u64,
    pub mem_usage_samples: u64,
    pub cpu_util_samples: u64,
    pub hbm_samples: u64,
    pub warnings: Vec<String>,
    /// Events the profiler says it dropped ("N trace events were dropped").
    pub dropped_by_profiler: u64,
    /// Elements that are not objects, or events with no usable timestamp.
    pub skipped: u64,
    /// Events whose layer (framework, runtime, hardware) cannot be told.
    pub unknown_layer: u64,
    /// How the file was read: its variant and what was inferred.
    pub readings: Vec<String>,
}

impl NeuronCounts {
    /// Events per source, as the diagnostics list them (`framework 3, …`).
    pub fn by_source_text(&self) -> String {
        self.by_source
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The joins, as the diagnostics list them.
    pub fn links_text(&self) -> String {
        format!(
            "{} flow links, {} by exec_id, {} by sequence id",
            self.flow_links, self.exec_key_links, self.sequence_links
        )
    }
}
