//! Property tests: any bytes, and any soup of plausible trace tokens, fed to every reader
//! (each format and auto-detection, plain and gzip, strict and skipping) never panic, and
//! every request produced is sane (size 1 B..=1 TiB, no address overflow, times monotonic).

use std::io::{Cursor, Write};

use flashlife::workload::NonMonotonic;
use flashlife::workload::{TraceConfig, TraceReader, Workload};
use proptest::prelude::*;

const FORMATS: [&str; 8] = ["auto", "msr", "disksim", "mqsim", "spc", "blkparse", "cloudphysics", "flashlife"];

fn consume(data: Vec<u8>, format: &str, skip: bool, clamp: bool) {
    let cfg = TraceConfig {
        format: format.into(),
        skip_bad_lines: skip,
        non_monotonic: if clamp { NonMonotonic::Clamp } else { NonMonotonic::Error },
        ..TraceConfig::default()
    };
    let Ok(mut r) = TraceReader::from_reader("p", Cursor::new(data), &cfg) else { return };
    let mut last = 0;
    for _ in 0..100_000 {
        match r.next_request() {
            Ok(Some(q)) => {
                assert!(q.size >= 1 && q.size <= 1 << 40);
                assert!(q.offset.checked_add(q.size).is_some());
                assert!(q.arrival_ns >= last);
                last = q.arrival_ns;
            }
            Ok(None) => {
                assert!(r.next_request().unwrap().is_none(), "stays at end");
                return;
            }
            Err(e) => {
                let m = e.to_string();
                assert!(m.starts_with("p:") || m.starts_with("p: "), "{m}");
                return;
            }
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    g.write_all(data).unwrap();
    g.finish().unwrap()
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("128166372003061629".to_string()),
        Just("Read".to_string()),
        Just("Write".to_string()),
        Just("hm".to_string()),
        Just("8,16".to_string()),
        Just("D".to_string()),
        Just("C".to_string()),
        Just("WS".to_string()),
        Just("R".to_string()),
        Just("+".to_string()),
        Just("[java]".to_string()),
        Just("2a".to_string()),
        Just("0x88".to_string()),
        Just("w".to_string()),
        Just("time_ns,op,offset,size".to_string()),
        Just("time_ns,op,offset,size,stream,budget_us".to_string()),
        Just("version,time,op,size,lbn".to_string()),
        Just("CPU0 (8,0):".to_string()),
        Just("-1".to_string()),
        Just("0.5".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("\u{feff}".to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        (0u64..100_000).prop_map(|v| v.to_string()),
        "[ -~]{0,12}",
    ]
}

fn line() -> impl Strategy<Value = String> {
    (prop::collection::vec(token(), 0..12), prop_oneof![Just(","), Just(" "), Just("  "), Just("\t")])
        .prop_map(|(toks, sep)| toks.join(sep))
}

fn lines() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(line(), 0..30), prop_oneof![Just("\n"), Just("\r\n")])
        .prop_map(|(ls, nl)| ls.join(nl).into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2048), f in 0usize..8, skip: bool, clamp: bool) {
        consume(data, FORMATS[f], skip, clamp);
    }

    #[test]
    fn random_token_lines_never_panic(data in lines(), f in 0usize..8, skip: bool, clamp: bool, gz: bool) {
        let data = if gz { gzip(&data) } else { data };
        consume(data, FORMATS[f], skip, clamp);
    }

    #[test]
    fn mutated_valid_lines_never_panic(
        f in 0usize..8,
        flips in prop::collection::vec((0usize..200, any::<u8>()), 0..6),
    ) {
        let seeds = [
            "128166372003061629,hm,1,Read,8192,4096,100\n128166372003061639,hm,1,Write,0,512,100\n",
            "0.5 0 5 8 1\n1.75 3 16 1 0\n",
            "100 0 5 8 1\n350 0 5 8 0\n",
            "0,20941264,8192,W,0.551706\n1,16,512,r,0.651706\n",
            "  8,0 1 1 0.0001 5025 D R 8 + 8 [p]\n  8,0 1 2 0.0002 5025 C R 8 + 8 [0]\nCPU0 (8,0):\n",
            "version,time,op,size,lbn\n1,100,2a,512,8\n1,200,28,4096,16\n",
            "time_ns,op,offset,size,stream\n10,W,0,4096,2\n15,R,4096,512,0\n",
            "time_ns,op,offset,size,stream,budget_us\n10,W,0,4096,2,\n15,R,4096,512,0,250\n",
        ];
        let mut data = seeds[f].as_bytes().to_vec();
        for (i, b) in flips {
            let n = data.len();
            data[i % n] = b;
        }
        for format in FORMATS {
            consume(data.clone(), format, false, true);
            consume(data.clone(), format, true, false);
        }
    }
}
