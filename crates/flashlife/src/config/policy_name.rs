//! A policy's name as a configuration key takes it (`gc.victim`, `open_channel.device_policy`):
//! one of the baseline's ([`Baseline`], a `choice!` enum) or a technique's. A technique's
//! policy is declared by the technique's own configuration section (e.g.
//! [`ZombieConfig::VICTIM`], [`FtPassdConfig::POLICIES`]) and built by the technique registry
//! (`techniques`); the baseline's lists name no technique. Either way the name is checked when
//! the configuration is read, and a wrong one is refused with every name taken.

use std::fmt;

use super::{DevicePolicyKind, FtPassdConfig, VictimKind, ZombieConfig};

/// The baseline's policies of one key, and the techniques' names the key also takes.
pub trait Baseline: Copy + Eq + fmt::Debug + 'static {
    /// The baseline's names and values, in the same order.
    const NAMES: &'static [&'static str];
    const ALL: &'static [Self];
    /// The names techniques declare for this key.
    const TECHNIQUES: &'static [&'static str];
    fn name(self) -> &'static str;
}

impl Baseline for VictimKind {
    const NAMES: &'static [&'static str] = VictimKind::NAMES;
    const ALL: &'static [Self] = VictimKind::ALL;
    const TECHNIQUES: &'static [&'static str] = &[ZombieConfig::VICTIM];
    fn name(self) -> &'static str {
        VictimKind::name(self)
    }
}

impl Baseline for DevicePolicyKind {
    const NAMES: &'static [&'static str] = DevicePolicyKind::NAMES;
    const ALL: &'static [Self] = DevicePolicyKind::ALL;
    const TECHNIQUES: &'static [&'static str] = FtPassdConfig::POLICIES;
    fn name(self) -> &'static str {
        DevicePolicyKind::name(self)
    }
}

/// A policy's name: the baseline's (the layer below builds it) or a technique's, by the name
/// its section declares (its technique builds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyName<K> {
    Baseline(K),
    Technique(&'static str),
}

/// `gc.victim`.
pub type VictimName = PolicyName<VictimKind>;
/// `open_channel.device_policy`.
pub type DevicePolicyName = PolicyName<DevicePolicyKind>;

impl<K: Baseline> PolicyName<K> {
    /// The name as written in TOML.
    pub fn name(self) -> &'static str {
        match self {
            PolicyName::Baseline(k) => k.name(),
            PolicyName::Technique(name) => name,
        }
    }

    /// Every name the key takes: the baseline's, then the techniques'.
    pub fn names() -> impl Iterator<Item = &'static str> {
        K::NAMES.iter().chain(K::TECHNIQUES).copied()
    }

    fn from_name(name: &str) -> Option<Self> {
        if let Some(i) = K::NAMES.iter().position(|&n| n == name) {
            return Some(PolicyName::Baseline(K::ALL[i]));
        }
        K::TECHNIQUES.iter().find(|&&n| n == name).map(|&n| PolicyName::Technique(n))
    }
}

impl From<VictimKind> for VictimName {
    fn from(k: VictimKind) -> Self {
        PolicyName::Baseline(k)
    }
}

impl<K: Baseline> fmt::Display for PolicyName<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<K: Baseline> serde::Serialize for PolicyName<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de, K: Baseline> serde::Deserialize<'de> for PolicyName<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        PolicyName::from_name(&name).ok_or_else(|| {
            // The wording of serde's own refusal of an unknown name (the `choice!` enums').
            let expected: Vec<String> = PolicyName::<K>::names().map(|n| format!("`{n}`")).collect();
            serde::de::Error::custom(format!("unknown variant `{name}`, expected one of {}", expected.join(", ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name of `K`'s key reads back as itself, a technique's included.
    fn round_trip<K: Baseline>() {
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(bound = "K: Baseline")]
        struct T<K> {
            v: PolicyName<K>,
        }
        for name in PolicyName::<K>::names() {
            let t: T<K> = toml::from_str(&format!("v = \"{name}\"")).unwrap();
            assert_eq!(t.v.name(), name);
            assert_eq!(toml::to_string(&t).unwrap().trim(), format!("v = \"{name}\""));
        }
    }

    /// Every name reads back as itself, a technique's included; a wrong one is refused with
    /// the whole list.
    #[test]
    fn names_round_trip_and_a_wrong_one_lists_them() {
        round_trip::<VictimKind>();
        round_trip::<DevicePolicyKind>();
        #[derive(serde::Deserialize)]
        struct T {
            v: VictimName,
            d: Option<DevicePolicyName>,
        }
        let t: T = toml::from_str("v = \"fifo\"").unwrap();
        assert_eq!(t.v, VictimName::Baseline(VictimKind::Fifo));
        let t: T = toml::from_str("v = \"zombie\"\nd = \"ft_passd\"").unwrap();
        assert_eq!(t.v, VictimName::Technique(ZombieConfig::VICTIM));
        assert_eq!(t.d, Some(DevicePolicyName::Technique(FtPassdConfig::SHIFT)));
        let e = toml::from_str::<T>("v = \"greddy\"").err().unwrap().to_string();
        assert!(e.contains("`greedy`, `fifo`, `cost_benefit`, `random`, `zombie`"), "{e}");
        let e = toml::from_str::<T>("v = \"fifo\"\nd = \"ftpassd\"").err().unwrap().to_string();
        assert!(e.contains("`ocssd`, `ft_passd_no_shift`, `ft_passd`"), "{e}");
    }
}
