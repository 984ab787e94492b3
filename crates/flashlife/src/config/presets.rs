//! Named presets: TOML fragments merged over the defaults. Each lives in
//! `crates/flashlife/presets/NAME.toml`; its first comment line is its description.

/// A named configuration fragment.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    pub toml: &'static str,
}

impl Preset {
    /// The first comment line of the preset file.
    pub fn description(&self) -> &'static str {
        self.toml.lines().find_map(|l| l.strip_prefix('#')).map(str::trim).unwrap_or("")
    }
}

macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        /// Every preset, in the order `flashlife presets` lists them.
        pub const ALL: &[Preset] = &[
            $(Preset { name: $name, toml: include_str!(concat!("../../presets/", $name, ".toml")) },)*
        ];
    };
}

presets!(
    "default",
    "tiny",
    "bench-16g",
    "ftpassd-paper",
    "ftpassd-small",
    "reusable-small",
    "reusable-medium",
    "reusable-large",
    "baseline-synthetic-tlc",
    "zombie-synthetic-tlc",
    "baseline-synthetic-mlc",
    "zombie-synthetic-mlc",
    "baseline-unlevelled-synthetic-tlc",
    "baseline-unlevelled-synthetic-mlc",
    "baseline-trace-tlc",
    "zombie-trace-tlc",
    "baseline-trace-mlc",
    "zombie-trace-mlc",
    "salvage-table1",
    "salvage-small",
    "intel750-mlc",
    "intel535-mlc",
    "samsung970pro-mlc",
);

/// The preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    ALL.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use crate::config::ConfigBuilder;

    #[test]
    fn every_preset_builds() {
        for p in super::ALL {
            ConfigBuilder::new().preset(p.name).and_then(|b| b.build()).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert!(!p.description().is_empty(), "{} has no description", p.name);
        }
    }
}
