//! `gc.victim`: the name of a GC victim policy, the baseline's ([`VictimKind`]) or a
//! technique's. A technique's policy is declared by the technique's own configuration section
//! (its name, e.g. [`ZombieConfig::VICTIM`]) and built by the technique registry
//! (`techniques::ftl_plugins`); the baseline's list names no technique. Either way the name is
//! checked when the configuration is read, and a wrong one is refused with every name taken.

use std::fmt;

use super::{VictimKind, ZombieConfig};

/// The victim policies techniques provide, by the names their sections declare.
const TECHNIQUE_VICTIMS: &[&str] = &[ZombieConfig::VICTIM];

/// A victim policy's name as `gc.victim` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VictimName {
    /// One of the baseline's policies (the FTL builds it).
    Baseline(VictimKind),
    /// A technique's policy, by the name its section declares (its technique builds it).
    Technique(&'static str),
}

impl VictimName {
    /// The name as written in TOML.
    pub fn name(self) -> &'static str {
        match self {
            VictimName::Baseline(k) => k.name(),
            VictimName::Technique(name) => name,
        }
    }

    /// Every name `gc.victim` takes: the baseline's, then the techniques'.
    pub fn names() -> impl Iterator<Item = &'static str> {
        VictimKind::NAMES.iter().chain(TECHNIQUE_VICTIMS).copied()
    }

    fn from_name(name: &str) -> Option<VictimName> {
        if let Some(i) = VictimKind::NAMES.iter().position(|&n| n == name) {
            return Some(VictimName::Baseline(VictimKind::ALL[i]));
        }
        TECHNIQUE_VICTIMS.iter().find(|&&n| n == name).map(|&n| VictimName::Technique(n))
    }
}

impl From<VictimKind> for VictimName {
    fn from(k: VictimKind) -> Self {
        VictimName::Baseline(k)
    }
}

impl fmt::Display for VictimName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for VictimName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for VictimName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        VictimName::from_name(&name).ok_or_else(|| {
            // The wording of serde's own refusal of an unknown name (the `choice!` enums').
            let expected: Vec<String> = VictimName::names().map(|n| format!("`{n}`")).collect();
            serde::de::Error::custom(format!("unknown variant `{name}`, expected one of {}", expected.join(", ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name reads back as itself, a technique's included; a wrong one is refused with
    /// the whole list.
    #[test]
    fn names_round_trip_and_a_wrong_one_lists_them() {
        #[derive(serde::Serialize, serde::Deserialize)]
        struct T {
            v: VictimName,
        }
        for name in VictimName::names() {
            let t: T = toml::from_str(&format!("v = \"{name}\"")).unwrap();
            assert_eq!(t.v.name(), name);
            assert_eq!(toml::to_string(&t).unwrap().trim(), format!("v = \"{name}\""));
        }
        let t: T = toml::from_str("v = \"fifo\"").unwrap();
        assert_eq!(t.v, VictimName::Baseline(VictimKind::Fifo));
        let t: T = toml::from_str("v = \"zombie\"").unwrap();
        assert_eq!(t.v, VictimName::Technique(ZombieConfig::VICTIM));
        let e = toml::from_str::<T>("v = \"greddy\"").err().unwrap().to_string();
        assert!(e.contains("`greedy`, `fifo`, `cost_benefit`, `random`, `zombie`"), "{e}");
    }
}
