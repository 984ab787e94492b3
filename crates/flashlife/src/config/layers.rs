//! Layered configuration: defaults <- preset <- file <- `--set` overrides, merged as TOML
//! trees, then checked key by key against the schema before being read into [`Config`].

use toml::{Table, Value};

use super::{presets, Config};
use crate::error::{Error, Result};

/// Keys that are valid although the default configuration leaves them out.
const OPTIONAL_KEYS: &[&str] = &[
    "capacity.overprovisioning",
    "capacity.reserve",
    // Written only when not the default (configurations that predate them keep their text).
    "flash.capacity_on_drop",
    "ftl.allocation",
    "gc.mode",
    "gc.stream",
    "wear_leveling.measure",
    "wear_leveling.cold_stream",
    "zombie.affordable_drops",
    "timing.urgent_gc_ratio",
    "timing.urgent_gc_pace",
    "sampling",
    "stats.request_log",
    "workload.trim_ratio",
    "workload.trace.discards",
    "workload.trace.stream",
    "cache",
    "mapping_cache",
    "reliability.reclaim_when",
    "reliability.hint_latency",
    "reliability.budget_placement",
    "reliability.read_thresholds_us",
    "open_channel.placement",
    "open_channel.host_buffer_kib",
    "open_channel.min_write_kib",
    "ftpassd",
    // An array of tables, each checked by its type (unknown keys refused there).
    "flows",
];

/// Builds a [`Config`] from layers.
#[derive(Debug, Clone)]
pub struct ConfigBuilder {
    tree: Table,
    schema: Table,
}

impl Default for ConfigBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn default_tree() -> Table {
    match Value::try_from(Config::default()) {
        Ok(Value::Table(t)) => t,
        _ => Table::new(),
    }
}

/// The keys a layer may set: the defaults' tree plus the sections a resolved configuration
/// leaves out while they hold their defaults (`workload.periodic`).
fn schema(tree: &Table) -> Table {
    let mut schema = tree.clone();
    if let (Some(Value::Table(w)), Ok(p)) =
        (schema.get_mut("workload"), Value::try_from(crate::workload::PeriodicConfig::default()))
    {
        w.insert("periodic".into(), p);
    }
    schema
}

impl ConfigBuilder {
    /// Start from the documented defaults.
    pub fn new() -> Self {
        let tree = default_tree();
        ConfigBuilder { schema: schema(&tree), tree }
    }

    /// Merge a named preset.
    pub fn preset(mut self, name: &str) -> Result<Self> {
        let p = presets::find(name).ok_or_else(|| {
            let names: Vec<&str> = presets::ALL.iter().map(|p| p.name).collect();
            let mut e = Error::config("preset", name, format!("one of: {}", names.join(", ")));
            if let Error::Config { suggestion, .. } = &mut e {
                *suggestion = closest(name, names.iter().copied());
            }
            e
        })?;
        self = self.toml_str(p.toml, &format!("preset {}", p.name))?;
        Ok(self)
    }

    /// Merge a TOML document; `origin` names it in errors.
    pub fn toml_str(mut self, text: &str, origin: &str) -> Result<Self> {
        let layer: Table = text.parse::<Table>().map_err(|e| {
            let msg = e.message().to_string();
            let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1)).unwrap_or(0);
            Error::Run(format!("{origin}:{line}: {msg}"))
        })?;
        self.merge_layer(layer, "")?;
        Ok(self)
    }

    /// Merge a TOML file.
    pub fn file(self, path: &str) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        self.toml_str(&text, path)
    }

    /// Apply `a.b.c=value`; the value is read as TOML (number, bool, string, array), or as a
    /// bare string when it is not valid TOML.
    pub fn set(mut self, assignment: &str) -> Result<Self> {
        let (key, raw) = assignment
            .split_once('=')
            .ok_or_else(|| Error::config(assignment, "", "an assignment of the form key.path=value".to_string()))?;
        let key = key.trim();
        let raw = raw.trim();
        if raw.contains(['\n', '\r']) {
            // TOML would read only the first line and drop the rest without a word.
            return Err(Error::config(key, raw.escape_debug(), "a value on one line (one --set per key)"));
        }
        let value = match format!("v = {raw}").parse::<Table>() {
            Ok(mut t) => t.remove("v").unwrap_or(Value::String(raw.to_string())),
            Err(_) => Value::String(raw.to_string()),
        };
        let mut layer = Table::new();
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(Error::config(key, raw, "a dotted key such as geometry.channels"));
        }
        let mut cur = &mut layer;
        for p in &parts[..parts.len() - 1] {
            cur = match cur.entry(p.to_string()).or_insert_with(|| Value::Table(Table::new())) {
                Value::Table(t) => t,
                _ => unreachable!("fresh tables only"),
            };
        }
        cur.insert(parts[parts.len() - 1].to_string(), value);
        self.merge_layer(layer, "")?;
        Ok(self)
    }

    fn merge_layer(&mut self, layer: Table, _origin: &str) -> Result<()> {
        check_keys(&layer, &self.schema, "")?;
        // Capacity is stated one way per layer: a layer that states one drops the other.
        if let Some(Value::Table(cap)) = layer.get("capacity") {
            let has_op = cap.contains_key("overprovisioning");
            let has_r = cap.contains_key("reserve");
            if has_op && has_r {
                return Err(Error::config(
                    "capacity",
                    "overprovisioning and reserve",
                    "only one of capacity.overprovisioning and capacity.reserve",
                ));
            }
            if let Some(Value::Table(tc)) = self.tree.get_mut("capacity") {
                if has_op {
                    tc.remove("reserve");
                }
                if has_r {
                    tc.remove("overprovisioning");
                }
            }
        }
        merge(&mut self.tree, layer);
        Ok(())
    }

    /// Read the merged tree into a validated [`Config`].
    pub fn build(self) -> Result<Config> {
        let mut cfg: Config = serde_path_to_error::deserialize(Value::Table(self.tree)).map_err(|e| type_error(&e))?;
        cfg.validate()?;
        // A default that depends on another key is resolved here, so that the written
        // configuration names the run whatever a later version defaults to.
        cfg.ftl.allocation = Some(cfg.allocation());
        Ok(cfg)
    }
}

/// A value of the wrong type, named by its dotted key (`host.queue_depth = "four"`).
fn type_error(e: &serde_path_to_error::Error<toml::de::Error>) -> Error {
    let msg = e.inner().message().replace('\n', " ");
    let key = e.path().to_string();
    if key.is_empty() || key == "." {
        return Error::Run(format!("config: {msg}"));
    }
    // serde says "unknown variant `greddy`, expected one of `greedy`, `fifo`, ...": the
    // names a key takes, with the closest as a suggestion.
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((value, expected)) = rest.split_once("`, expected ") {
            let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            let mut e = Error::config(key, format!("\"{value}\""), format!("one of: {}", names.join(", ")));
            if let Error::Config { suggestion, .. } = &mut e {
                *suggestion = closest(value, names.iter().copied());
            }
            return e;
        }
    }
    // serde says "invalid type: string \"four\", expected u32": the value, then what fits.
    match msg.split_once(", expected ") {
        Some((got, expected)) => Error::config(key, got.trim_start_matches("invalid type: "), expected),
        None => Error::config(key, "", msg),
    }
}

fn merge(base: &mut Table, layer: Table) {
    for (k, v) in layer {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(l)) => merge(b, l),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    candidates
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(s, _)| *s > 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}

fn check_keys(layer: &Table, schema: &Table, prefix: &str) -> Result<()> {
    for (k, v) in layer {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match schema.get(k) {
            Some(Value::Table(sub)) => match v {
                Value::Table(t) => check_keys(t, sub, &path)?,
                other => return Err(Error::config(&path, other, "a table of keys")),
            },
            Some(_) => {}
            None if OPTIONAL_KEYS.contains(&path.as_str()) => {}
            None => {
                let mut names: Vec<String> = schema.keys().map(|s| s.to_string()).collect();
                names.extend(
                    OPTIONAL_KEYS
                        .iter()
                        .filter_map(|o| o.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')))
                        .filter(|n| !n.contains('.') && !prefix.is_empty())
                        .map(str::to_string),
                );
                let suggestion = closest(k, names.iter().map(|s| s.as_str())).map(|s| {
                    if prefix.is_empty() {
                        s
                    } else {
                        format!("{prefix}.{s}")
                    }
                });
                let expected = if names.is_empty() {
                    "no keys here".to_string()
                } else {
                    format!("unknown key; valid keys here: {}", names.join(", "))
                };
                return Err(Error::Config { key: path, value: String::new(), expected, suggestion });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_build() {
        let c = ConfigBuilder::new().build().unwrap();
        // The one default that depends on another key is resolved by `build`.
        let mut want = Config::default();
        assert_eq!(want.ftl.allocation, None);
        want.ftl.allocation = Some(crate::config::Allocation::LeastLoaded);
        assert_eq!(c, want);
        let r = ConfigBuilder::new().set("timing.scheduler=\"reservation\"").unwrap().build().unwrap();
        assert_eq!(r.ftl.allocation, Some(crate::config::Allocation::Rotation));
        let s = ConfigBuilder::new().set("ftl.allocation=\"static\"").unwrap().build().unwrap();
        assert_eq!(s.ftl.allocation, Some(crate::config::Allocation::Static));
    }

    #[test]
    fn set_and_partial_tables_keep_defaults() {
        let c = ConfigBuilder::new().set("flash.slc.read_us=30").unwrap().build().unwrap();
        assert_eq!(c.flash.slc.read_us, 30.0);
        assert_eq!(c.flash.slc.program_us, Config::default().flash.slc.program_us);
    }

    #[test]
    fn unknown_key_suggests() {
        let e = ConfigBuilder::new().set("geometry.chanels=4").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("geometry.chanels"), "{s}");
        assert!(s.contains("did you mean `geometry.channels`"), "{s}");
    }

    #[test]
    fn a_wrong_type_names_its_key() {
        let e = ConfigBuilder::new().set("host.queue_depth=\"four\"").unwrap().build().unwrap_err().to_string();
        assert!(e.contains("host.queue_depth"), "{e}");
        assert!(e.contains("four") && e.contains("u32"), "{e}");
    }

    #[test]
    fn an_unknown_name_lists_the_names_and_suggests_one() {
        let e = ConfigBuilder::new().set("gc.victim=\"greddy\"").unwrap().build().unwrap_err().to_string();
        assert!(e.contains("gc.victim = \"greddy\""), "{e}");
        assert!(e.contains("one of: greedy, fifo, cost_benefit, random, zombie"), "{e}");
        assert!(e.contains("did you mean `greedy`"), "{e}");
    }

    #[test]
    fn a_set_value_with_a_newline_is_refused() {
        let e = ConfigBuilder::new().set("gc.victim=fifo\nseed=3").unwrap_err().to_string();
        assert!(e.contains("gc.victim") && e.contains("one line"), "{e}");
    }

    #[test]
    fn reserve_replaces_default_overprovisioning() {
        let c = ConfigBuilder::new().set("capacity.reserve=0.2").unwrap().build().unwrap();
        assert_eq!(c.capacity.reserve, Some(0.2));
        assert_eq!(c.capacity.overprovisioning, None);
        assert!((c.capacity.overprovisioning() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn bad_values_name_the_key() {
        for (set, key) in [
            ("geometry.channels=0", "geometry.channels"),
            ("capacity.overprovisioning=-0.1", "capacity.overprovisioning"),
            ("flash.page_size=100", "flash.page_size"),
            ("gc.victim=\"greddy\"", "gc.victim"),
        ] {
            let e = ConfigBuilder::new().set(set).and_then(|b| b.build()).unwrap_err().to_string();
            assert!(e.contains(key), "{set}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
