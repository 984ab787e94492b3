//! Fuzz the `mqsim` trace reader: arbitrary bytes must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| flashlife_fuzz::run("mqsim", data));
