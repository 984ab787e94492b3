//! Named random streams: every source of randomness (workload, failures, WOM encoding, GC
//! victims, ...) draws from a stream derived from the master seed and its own name, so the
//! same configuration and seed give identical results on every machine, and changing how one
//! stream is used never shifts another.

/// Seed of a named random stream: streams stay independent of each other.
pub fn stream_seed(master: u64, name: &str) -> u64 {
    // FNV-1a over the name, mixed with the master seed (splitmix64 finaliser).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = master ^ h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64: a fast, well-mixed 64-bit hash (Steele, Lea and Flood, OOPSLA 2014).
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for a numbered sub-stream of `seed` (changing one stream never shifts another).
pub fn derive_seed(seed: u64, tag: u64) -> u64 {
    splitmix64(seed ^ splitmix64(tag))
}
