//! Drive presets with sources (issue 20, item 7): every number a sourced preset states is checked
//! here against the table below, which names where it comes from, and each preset runs a short
//! stop. A value the source does not give is checked to be flashlife's default, so a preset cannot
//! quietly gain an unsourced figure.

use flashlife::{Config, ConfigBuilder, Simulator};

/// The presets whose every number cites a public source.
const SOURCED: [&str; 3] = ["intel750-mlc", "intel535-mlc", "samsung970pro-mlc"];

const SIMPLESSD_750: &str = "SimpleSSD config/intel750_400gb.cfg (c-w-m/SimpleSSD @ 0935af13)";
const SIMPLESSD_535: &str = "SimpleSSD config/SATA/intel535_240gb.cfg (snowphone/SimpleSSD @ 9b3ca26c)";
const NVMEVIRT_970: &str = "NVMeVirt ssd_config.h, SAMSUNG_970PRO (snu-csl/nvmevirt @ 00793767)";
const SATA3: &str = "SATAMode = 2 (SATA 3.0, 6 Gb/s) with 8b/10b: 600 MB/s";

/// (preset, key of the resolved configuration, value, source).
const CITED: &[(&str, &str, &str, &str)] = &[
    ("intel750-mlc", "geometry.channels", "6", SIMPLESSD_750),
    ("intel750-mlc", "geometry.ways", "10", SIMPLESSD_750),
    ("intel750-mlc", "geometry.dies", "1", SIMPLESSD_750),
    ("intel750-mlc", "geometry.planes", "2", SIMPLESSD_750),
    ("intel750-mlc", "geometry.blocks_per_plane", "512", SIMPLESSD_750),
    ("intel750-mlc", "geometry.pages_per_block", "512", SIMPLESSD_750),
    ("intel750-mlc", "flash.bit_mode", "\"mlc\"", SIMPLESSD_750),
    ("intel750-mlc", "flash.page_size", "16384", SIMPLESSD_750),
    ("intel750-mlc", "flash.channel_mb_per_s", "333.0", SIMPLESSD_750),
    ("intel750-mlc", "flash.mlc.read_us_by_page_type", "[60.8125, 107.81]", SIMPLESSD_750),
    ("intel750-mlc", "flash.mlc.program_us_by_page_type", "[1160.31, 2625.0]", SIMPLESSD_750),
    ("intel750-mlc", "flash.mlc.erase_us", "3000.0", SIMPLESSD_750),
    ("intel750-mlc", "capacity.reserve", "0.22265625", SIMPLESSD_750),
    ("intel535-mlc", "geometry.channels", "8", SIMPLESSD_535),
    ("intel535-mlc", "geometry.ways", "2", SIMPLESSD_535),
    ("intel535-mlc", "geometry.dies", "8", SIMPLESSD_535),
    ("intel535-mlc", "geometry.planes", "2", SIMPLESSD_535),
    ("intel535-mlc", "geometry.blocks_per_plane", "512", SIMPLESSD_535),
    ("intel535-mlc", "geometry.pages_per_block", "512", SIMPLESSD_535),
    ("intel535-mlc", "flash.bit_mode", "\"mlc\"", SIMPLESSD_535),
    ("intel535-mlc", "flash.page_size", "4096", SIMPLESSD_535),
    ("intel535-mlc", "flash.channel_mb_per_s", "333.0", SIMPLESSD_535),
    ("intel535-mlc", "flash.mlc.read_us_by_page_type", "[59.975, 104.956]", SIMPLESSD_535),
    ("intel535-mlc", "flash.mlc.program_us_by_page_type", "[1092.372, 2550.0]", SIMPLESSD_535),
    ("intel535-mlc", "flash.mlc.erase_us", "3000.0", SIMPLESSD_535),
    ("intel535-mlc", "capacity.reserve", "0.12667623", SIMPLESSD_535),
    ("intel535-mlc", "host.link_mb_per_s", "600.0", SATA3),
    ("samsung970pro-mlc", "geometry.channels", "8", NVMEVIRT_970),
    ("samsung970pro-mlc", "geometry.ways", "2", NVMEVIRT_970),
    ("samsung970pro-mlc", "geometry.dies", "1", NVMEVIRT_970),
    ("samsung970pro-mlc", "geometry.planes", "1", NVMEVIRT_970),
    ("samsung970pro-mlc", "geometry.blocks_per_plane", "8192", NVMEVIRT_970),
    ("samsung970pro-mlc", "flash.bit_mode", "\"mlc\"", NVMEVIRT_970),
    ("samsung970pro-mlc", "flash.page_size", "32768", NVMEVIRT_970),
    ("samsung970pro-mlc", "flash.channel_mb_per_s", "800.0", NVMEVIRT_970),
    ("samsung970pro-mlc", "flash.mlc.read_us_by_page_type", "[30.013, 42.013]", NVMEVIRT_970),
    ("samsung970pro-mlc", "flash.mlc.program_us", "185.0", NVMEVIRT_970),
    ("samsung970pro-mlc", "capacity.overprovisioning", "0.07", NVMEVIRT_970),
    ("samsung970pro-mlc", "host.link_mb_per_s", "3360.0", NVMEVIRT_970),
];

/// (preset, key) the source does not give: flashlife's default, said so in the preset's comment.
const DEFAULTED: &[(&str, &str)] = &[
    ("intel750-mlc", "flash.mlc.pe_limit"),
    ("intel750-mlc", "host.link_mb_per_s"),
    ("intel750-mlc", "host.command_overhead_us"),
    ("intel750-mlc", "gc"),
    ("intel750-mlc", "ftl"),
    ("intel750-mlc", "workload"),
    ("intel535-mlc", "flash.mlc.pe_limit"),
    ("intel535-mlc", "host.command_overhead_us"),
    ("intel535-mlc", "gc"),
    ("intel535-mlc", "ftl"),
    ("intel535-mlc", "workload"),
    ("samsung970pro-mlc", "flash.mlc.erase_us"),
    ("samsung970pro-mlc", "geometry.pages_per_block"),
    ("samsung970pro-mlc", "flash.mlc.pe_limit"),
    ("samsung970pro-mlc", "host.command_overhead_us"),
    ("samsung970pro-mlc", "gc"),
    ("samsung970pro-mlc", "ftl"),
    ("samsung970pro-mlc", "workload"),
];

fn resolved(cfg: &Config) -> toml::Table {
    cfg.to_toml().parse().expect("the resolved configuration is TOML")
}

fn lookup<'a>(t: &'a toml::Table, key: &str) -> &'a toml::Value {
    let mut parts = key.split('.');
    let mut v = t.get(parts.next().unwrap()).unwrap_or_else(|| panic!("{key}: not in the configuration"));
    for p in parts {
        v = v.get(p).unwrap_or_else(|| panic!("{key}: not in the configuration"));
    }
    v
}

fn preset(name: &str) -> Config {
    ConfigBuilder::new().preset(name).and_then(|b| b.build()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn sourced_presets_carry_their_cited_values() {
    for name in SOURCED {
        let got = resolved(&preset(name));
        let rows: Vec<_> = CITED.iter().filter(|r| r.0 == name).collect();
        assert!(!rows.is_empty(), "{name}: no cited values in the table");
        for (_, key, want, source) in rows {
            let want: toml::Value = format!("v = {want}").parse::<toml::Table>().unwrap()["v"].clone();
            assert_eq!(lookup(&got, key), &want, "{name}: {key} is not the value cited from {source}");
        }
    }
}

#[test]
fn what_the_sources_do_not_give_stays_flashlifes_default() {
    // As built (`ftl.allocation` resolved, as in every preset).
    let default = resolved(&ConfigBuilder::new().build().unwrap());
    for (name, key) in DEFAULTED {
        let got = resolved(&preset(name));
        assert_eq!(lookup(&got, key), lookup(&default, key), "{name}: {key} is not sourced, so it must be the default");
    }
}

#[test]
fn every_key_a_sourced_preset_sets_is_cited() {
    // The preset's own keys (its TOML fragment) must all be in the table of cited values.
    for name in SOURCED {
        let text = flashlife::config::presets::find(name).unwrap().toml;
        let frag: toml::Table = text.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut keys = Vec::new();
        fn walk(prefix: &str, t: &toml::Table, out: &mut Vec<String>) {
            for (k, v) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match v {
                    toml::Value::Table(sub) => walk(&key, sub, out),
                    _ => out.push(key),
                }
            }
        }
        walk("", &frag, &mut keys);
        for key in keys {
            assert!(
                CITED.iter().any(|r| r.0 == name && r.1 == key),
                "{name}: {key} is set by the preset but has no cited source in this test's table"
            );
        }
        assert!(!flashlife::config::presets::find(name).unwrap().description().is_empty());
    }
}

/// (preset, raw bytes the cited geometry makes, logical bytes the cited spare leaves about).
const CAPACITY: [(&str, u64, f64); 3] = [
    // 6 x 10 x 2 x 512 x 512 pages of 16 KiB; the drive's 400 GB.
    ("intel750-mlc", 515_396_075_520, 400e9),
    // 8 x 2 x 8 x 2 x 512 x 512 pages of 4 KiB; the drive's 240 GB.
    ("intel535-mlc", 274_877_906_944, 240e9),
    // 8 x 2 x 8192 x 128 (flashlife's default) pages of 32 KiB, op 7%; NVMeVirt sizes its
    // blocks to the emulated capacity, so this one is not the drive's (512 GB) by construction.
    ("samsung970pro-mlc", 549_755_813_888, 513.8e9),
];

#[test]
fn sourced_presets_run_a_short_stop() {
    // The golden test runs them too (and pins their numbers); this checks what a run of each
    // reports of the cited drive: its raw capacity and the logical capacity its spare leaves.
    for (name, raw, logical) in CAPACITY {
        let cfg = ConfigBuilder::new()
            .preset(name)
            .and_then(|b| b.set("run.until=\"requests:3000\""))
            .and_then(|b| b.set("run.progress=\"off\""))
            .and_then(|b| b.set("ftl.precondition=\"empty\""))
            .and_then(|b| b.build())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = Simulator::new(cfg).and_then(|s| s.run()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let s: serde_json::Value = serde_json::from_str(&out.summary.to_json()).unwrap();
        assert_eq!(s["host"]["write_requests"].as_u64(), Some(3000), "{name}");
        assert_eq!(s["capacity"]["physical_bytes"].as_u64(), Some(raw), "{name}");
        let got = s["capacity"]["logical_bytes"].as_f64().unwrap();
        assert!((got / logical - 1.0).abs() < 0.005, "{name}: logical {got} B, cited about {logical} B");
        assert!(s["device_time_us"]["write"]["p50"].as_f64().unwrap() > 0.0, "{name}");
    }
}
