//! Documentation stays true: every configuration key is listed in docs/configuration.md,
//! and every preset is described.

use flashlife::config::presets;
use flashlife::Config;

fn keys(prefix: &str, v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                keys(&p, v, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

#[test]
fn every_config_key_is_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let doc = std::fs::read_to_string(path).expect("docs/configuration.md");
    let mut all = Vec::new();
    keys("", &toml::Value::try_from(Config::default()).unwrap(), &mut all);
    all.push("capacity.reserve".into());
    let missing: Vec<&String> = all.iter().filter(|k| !doc.contains(&format!("`{k}`"))).collect();
    assert!(missing.is_empty(), "keys missing from docs/configuration.md: {missing:?}");
}

#[test]
fn every_preset_is_in_the_configuration_doc() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let doc = std::fs::read_to_string(path).expect("docs/configuration.md");
    for p in presets::ALL {
        assert!(doc.contains(&format!("`{}`", p.name)), "preset {} not in docs/configuration.md", p.name);
    }
}
