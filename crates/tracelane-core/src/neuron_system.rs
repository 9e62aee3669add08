//! What a Neuron *system* profile holds besides its events: HBM usage by
//! category, the profile's metadata, the device profiles it lists, and the
//! counters of a summary JSON read beside it — kept typed on the trace for
//! the analyses and views.

use serde::{Deserialize, Serialize};

/// A system profile's tables (`device_mem_usage`,
/// `system_profile_metadata`, `device_profile_list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NeuronSystemInfo {
    /// One per HBM the profile sampled.
    pub hbm: Vec<HbmUsage>,
    /// `system_profile_metadata`: the clock span the capture covers.
    pub first_ts_ns: Option<i64>,
    pub last_ts_ns: Option<i64>,
    pub hbm_capacity_bytes: Option<i64>,
    pub ntff_version: Option<String>,
    /// Every metadata field, as text.
    pub metadata: Vec<(String, String)>,
    /// `device_profile_list`: the device profiles captured with it.
    pub device_profiles: Vec<ListedProfile>,
    /// Summary JSON counters read beside the profile.
    pub summaries: Vec<ProfileSummary>,
}

/// One HBM's usage over the capture.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HbmUsage {
    pub instance: String,
    pub device: String,
    pub hbm: String,
    pub samples: u64,
    /// Peak bytes per category in use (`tensors`, `dram_spill`, …), in the
    /// schema's order.
    pub peak_bytes: Vec<(String, f64)>,
    /// Peak of `total_bytes`, where the rows give it.
    pub peak_total: Option<f64>,
}

/// The process an HBM's lanes are on: `<instance>/HBM <device>:<hbm>`.
pub fn hbm_process_name(instance: &str, device: &str, hbm: &str) -> String {
    format!("{instance}/HBM {device}:{hbm}")
}

impl HbmUsage {
    /// The process its lanes are on.
    pub fn process_name(&self) -> String {
        hbm_process_name(&self.instance, &self.device, &self.hbm)
    }

    /// The peak of one category, 0 when never in use.
    pub fn peak(&self, category: &str) -> f64 {
        self.peak_bytes
            .iter()
            .find(|(c, _)| c == category)
            .map_or(0.0, |(_, v)| *v)
    }
}

/// A `device_profile_list` row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListedProfile {
    pub name: String,
    pub instance: String,
    pub process: String,
    pub nc: Option<i64>,
    pub model: Option<i64>,
}

/// One profile's counters from a summary JSON (`neuron-explorer view
/// --output-format summary-json`): one object per profile, keyed
/// `s_<hash>` (a system profile) or `n_<hash>` (a device profile).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSummary {
    /// The profile's key (`n_7792fe1d…`).
    pub key: String,
    /// `system` or `device`, from the key's prefix.
    pub kind: String,
    /// Every numeric counter, by name, as written.
    pub counters: Vec<(String, f64)>,
    /// Nested objects flattened (`event_type_count.kbl_exec_pre`).
    pub nested: Vec<(String, f64)>,
    /// How this file's `*_percent` values were read: `fraction` (0–1, as
    /// summary-json writes them where attested) or `percent` (0–100), and
    /// why.
    pub percent_scale: String,
    /// Percent counters on the 0–100 scale, whatever the file wrote.
    pub percents: Vec<(String, f64)>,
}

impl ProfileSummary {
    /// A counter by name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.counters
            .iter()
            .chain(&self.nested)
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
    }
}

/// How a profile's `*_percent` counters are scaled: the Parquet schema
/// says "percent", the summary JSON measured on hardware writes 0–1
/// fractions (scripts print `100 * …_percent`). Decided per file: any value
/// above 1 means percent. Returns the factor to 0–100 and the reading in
/// words.
pub fn percent_scale(values: &[f64]) -> (f64, String) {
    if values.is_empty() {
        return (1.0, "no *_percent counters".into());
    }
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    if max > 1.0 {
        (
            1.0,
            format!(
                "percent (0–100): a *_percent value above 1 among {} (max {max:.3})",
                values.len()
            ),
        )
    } else {
        (
            100.0,
            format!(
                "fraction (0–1), shown ×100: all {} *_percent values ≤ 1, as summary-json writes them where measured",
                values.len()
            ),
        )
    }
}
