//! Write-once-memory (WOM) codes for Reusable SSD second writes (design section 3, technique 2;
//! paper `001`, sections 2-5).
//!
//! Three pieces live here:
//!
//! 1. A real Rivest-Shamir two-write code (2 data bits in 3 cells, the paper's Table 1) with a
//!    byte-buffer encoder and decoder: [`encode_first`], [`encode_second`], [`decode`],
//!    [`cells_len`]. It is what "second writes only raise cells" means, made concrete and tested.
//! 2. The complement trick for unencoded first writes ([`complement_encode`],
//!    [`complement_decode`]): a page with more than half ones is stored complemented with a flag
//!    bit, so at least half the cells stay erased for the second write.
//! 3. [`WomModel`], the probabilistic code the FTL actually uses: Reusable SSD's second writes use
//!    a polar WOM code (paper's Table 2(d)) that needs 210% of a logical page and succeeds with
//!    probability P; we model its outcome, not its bits.
//!
//! # Cell polarity
//!
//! Throughout this module a cell bit is `0` when erased and `1` when programmed, as in the paper:
//! programming can only raise a cell `0 -> 1`, only an erase brings it back to `0`. (Real NAND
//! reads an erased cell as `1`; if a physical model ever needs that, it is one inversion at its
//! boundary, and nothing here changes.)
//!
//! # Packing of the Rivest-Shamir cell buffer
//!
//! Data bits are read LSB first: data byte `i` holds symbols `4i .. 4i+3`, symbol `k` being bits
//! `2(k%4)` (its `b0`) and `2(k%4)+1` (its `b1`) of byte `k/4`, with value `s = b0 + 2*b1`.
//! Symbol `k` owns cells `3k, 3k+1, 3k+2` of the cell buffer, cell `j` being bit `j%8` of cell byte
//! `j/8` (LSB first again). So data byte `i` maps to the 12 cells `12i .. 12i+11`: two data bytes
//! fill exactly three cell bytes, and a page of `N` data bytes needs `ceil(3N/2)` cell bytes
//! ([`cells_len`]). When `N` is odd the high nibble of the last cell byte is unused: it is never
//! read or written.
//!
//! With that reading order the code is exactly the paper's Table 1 (cells written `c0 c1 c2`,
//! data written `b0 b1`):
//!
//! | data `b0 b1` | `s` | first write | second write |
//! |--------------|-----|-------------|--------------|
//! | 00           | 0   | 000         | 111          |
//! | 10           | 1   | 100         | 011          |
//! | 01           | 2   | 010         | 101          |
//! | 11           | 3   | 001         | 110          |

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// First-generation codewords (weight <= 1), indexed by symbol value; bit `j` is cell `j`.
const FIRST: [u8; 4] = [0b000, 0b001, 0b010, 0b100];

/// Second-generation codewords (weight >= 2): the complement of the first-generation codeword.
const SECOND: [u8; 4] = [0b111, 0b110, 0b101, 0b011];

/// Marks an impossible transition in [`NEXT3`].
const NO: u8 = 0xff;

/// Decodes one 3-cell group: weight <= 1 reads the first-generation table, weight >= 2 reads the
/// complement through it.
const fn decode3(c: u8) -> u8 {
    let c = c & 7;
    let w = if c.count_ones() <= 1 { c } else { !c & 7 };
    match w {
        0b000 => 0,
        0b001 => 1,
        0b010 => 2,
        _ => 3,
    }
}

/// `NEXT3[c * 4 + s]`: the cells a second write of symbol `s` leaves in a group holding `c`, or
/// [`NO`] when that would need a cell to fall. Same value: cells untouched (no programming at all,
/// which is also what keeps a second write after a second write legal when nothing changes).
const NEXT3: [u8; 32] = {
    let mut t = [NO; 32];
    let mut c = 0;
    while c < 8 {
        let mut s = 0;
        while s < 4 {
            let next = if decode3(c as u8) == s as u8 { c as u8 } else { SECOND[s] };
            // Legal only if every programmed cell stays programmed.
            if (c as u8) & !next == 0 {
                t[c * 4 + s] = next;
            }
            s += 1;
        }
        c += 1;
    }
    t
};

/// First-write encoding of a whole data byte into its 12 cells.
const ENC_FIRST: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut d = 0;
    while d < 256 {
        let mut g = 0u16;
        let mut k = 0;
        while k < 4 {
            g |= (FIRST[(d >> (2 * k)) & 3] as u16) << (3 * k);
            k += 1;
        }
        t[d] = g;
        d += 1;
    }
    t
};

/// Decoding of 12 cells into a data byte (both generations).
const DEC: [u8; 4096] = {
    let mut t = [0u8; 4096];
    let mut g = 0;
    while g < 4096 {
        let mut d = 0u8;
        let mut k = 0;
        while k < 4 {
            d |= decode3(((g >> (3 * k)) & 7) as u8) << (2 * k);
            k += 1;
        }
        t[g] = d;
        g += 1;
    }
    t
};

/// Cell bytes needed to store `data_len` data bytes with the Rivest-Shamir code: `ceil(3N/2)`.
pub const fn cells_len(data_len: usize) -> usize {
    data_len + data_len.div_ceil(2)
}

/// Reads the 12 cells of data byte `i` (see the module doc for the packing).
#[inline]
fn get_group(cells: &[u8], i: usize) -> u16 {
    let b = i * 3 / 2;
    if i & 1 == 0 {
        cells[b] as u16 | ((cells[b + 1] as u16 & 0x0f) << 8)
    } else {
        (cells[b] as u16 >> 4) | ((cells[b + 1] as u16) << 4)
    }
}

/// Writes the 12 cells of data byte `i`, leaving the neighbouring nibble alone.
#[inline]
fn set_group(cells: &mut [u8], i: usize, g: u16) {
    let b = i * 3 / 2;
    if i & 1 == 0 {
        cells[b] = g as u8;
        cells[b + 1] = (cells[b + 1] & 0xf0) | ((g >> 8) as u8 & 0x0f);
    } else {
        cells[b] = (cells[b] & 0x0f) | ((g as u8) << 4);
        cells[b + 1] = (g >> 4) as u8;
    }
}

/// Second-write transition of a 12-cell group to data byte `d`; `Err(k)` names the first symbol
/// (0..4) whose cells would need to fall.
#[inline]
fn second_group(g: u16, d: u8) -> Result<u16, usize> {
    let mut out = 0u16;
    for k in 0..4 {
        let c = ((g >> (3 * k)) & 7) as usize;
        let s = ((d >> (2 * k)) & 3) as usize;
        let next = NEXT3[c * 4 + s];
        if next == NO {
            return Err(k);
        }
        out |= (next as u16) << (3 * k);
    }
    Ok(out)
}

fn check_lengths(data_len: usize, cells_len_given: usize) {
    assert!(
        cells_len_given >= cells_len(data_len),
        "WOM cell buffer holds {cells_len_given} bytes, {data_len} data bytes need {}",
        cells_len(data_len)
    );
}

/// First write: programs erased cells with the first-generation codewords of `data` (weight <= 1
/// per 3-cell group, so at most a third of the cells are programmed).
///
/// The cells are assumed erased; the encoder overwrites them (it models programming, and an
/// erased page has nothing worth checking). No allocation.
///
/// # Panics
/// If `cells` is shorter than [`cells_len`]`(data.len())` (a caller bug, like a mis-sized
/// `copy_from_slice`).
pub fn encode_first(data: &[u8], cells: &mut [u8]) {
    check_lengths(data.len(), cells.len());
    for (i, &d) in data.iter().enumerate() {
        set_group(cells, i, ENC_FIRST[d as usize]);
    }
}

/// Second write of `data` onto cells that hold a first write: each 3-cell group whose value
/// changes becomes the complement of the new value's first-generation codeword (weight >= 2);
/// groups whose value does not change are left as they are. Cells only rise.
///
/// All or nothing: the whole buffer is checked before any cell is touched, so on error `cells`
/// is unchanged. No allocation on success.
///
/// # Errors
/// [`Error::Run`] naming the first data byte and symbol whose cells would have to fall, which
/// happens when the cells were not produced by a first write (e.g. they already hold a second
/// write of a different value).
///
/// # Panics
/// If `cells` is shorter than [`cells_len`]`(data.len())`.
pub fn encode_second(data: &[u8], cells: &mut [u8]) -> Result<()> {
    check_lengths(data.len(), cells.len());
    for (i, &d) in data.iter().enumerate() {
        let g = get_group(cells, i);
        if let Err(k) = second_group(g, d) {
            let c = (g >> (3 * k)) & 7;
            let s = (d >> (2 * k)) & 3;
            return Err(Error::Run(format!(
                "WOM second write: data byte {i}, symbol {k}: cells {c:03b} (c2 c1 c0) cannot take value {s} \
                 without lowering a cell; the cells do not hold a first write"
            )));
        }
    }
    for (i, &d) in data.iter().enumerate() {
        let g = get_group(cells, i);
        // Checked above; the fallback keeps the cells as they are rather than panic.
        let next = second_group(g, d).unwrap_or(g);
        set_group(cells, i, next);
    }
    Ok(())
}

/// Decodes cells holding a first or a second write into `out` (`out.len()` data bytes). Each
/// group decodes by weight: <= 1 through the first-generation table, >= 2 through its
/// complement. No allocation.
///
/// # Panics
/// If `cells` is shorter than [`cells_len`]`(out.len())`.
pub fn decode(cells: &[u8], out: &mut [u8]) {
    check_lengths(out.len(), cells.len());
    for (i, o) in out.iter_mut().enumerate() {
        *o = DEC[get_group(cells, i) as usize];
    }
}

/// Number of programmed cells (one bits) in a buffer.
pub fn programmed_cells(buf: &[u8]) -> u64 {
    buf.iter().map(|b| b.count_ones() as u64).sum()
}

/// Complement trick for an unencoded first write (paper section 3): a second write needs at least
/// half the cells still erased, so a page whose data has more than half ones is stored
/// complemented and flagged. Writes the stored image of `data` into `page` and returns the flag
/// bit (`true` = complemented) the caller keeps beside the page (one extra cell, e.g. in the
/// spare area).
///
/// Bound: with `n = 8 * data.len()` data cells plus the flag cell, at most `(n + 1) / 2` of the
/// `n + 1` cells are programmed (if the data has `w > n/2` ones the stored image has
/// `n - w < n/2` ones and the flag adds one).
///
/// # Panics
/// If `page.len() != data.len()`.
pub fn complement_encode(data: &[u8], page: &mut [u8]) -> bool {
    assert_eq!(page.len(), data.len(), "complement page and data lengths differ");
    let ones = programmed_cells(data);
    let complement = 2 * ones > 8 * data.len() as u64;
    if complement {
        for (p, d) in page.iter_mut().zip(data) {
            *p = !d;
        }
    } else {
        page.copy_from_slice(data);
    }
    complement
}

/// Inverse of [`complement_encode`]: recovers the data from the stored page and its flag bit.
///
/// # Panics
/// If `out.len() != page.len()`.
pub fn complement_decode(page: &[u8], complemented: bool, out: &mut [u8]) {
    assert_eq!(page.len(), out.len(), "complement page and output lengths differ");
    if complemented {
        for (o, p) in out.iter_mut().zip(page) {
            *o = !p;
        }
    } else {
        out.copy_from_slice(page);
    }
}

/// What became of one attempt to store a logical page as a second write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EncodeOutcome {
    /// The first encoding succeeded.
    Success,
    /// The first encoding failed and the retry (same invalid data, another internal encoding
    /// parameter: no extra read) succeeded.
    SuccessOnRetry,
    /// Every allowed attempt failed: the FTL writes the page as a first write instead.
    Failed,
}

impl EncodeOutcome {
    /// Whether the page was stored as a second write.
    pub fn is_success(self) -> bool {
        !matches!(self, EncodeOutcome::Failed)
    }
}

/// Probabilistic model of the WOM code Reusable SSD uses for second writes (the polar code of the
/// paper's Table 2(d)): its bits are not simulated, only whether an encoding succeeds, which is
/// all the FTL needs to decide between a second write and a first-write fallback.
///
/// Attempts are independent with success probability `success_probability`; with `retry` a
/// failed attempt is retried once on the same invalid data (the polar code changes an internal
/// parameter, so no extra read), giving `P + (1-P) P = 1 - (1-P)^2` overall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WomModel {
    /// Probability that one encoding attempt succeeds (paper: 0.95).
    pub success_probability: f64,
    /// Retry a failed encoding once before falling back to a first write (paper: yes).
    pub retry: bool,
    /// Physical capacity a second write needs, as a multiple of the logical page: two physical
    /// pages including their spare areas (paper: 2.10 = 210%, from 9% spare per page).
    pub capacity_ratio: f64,
}

impl Default for WomModel {
    fn default() -> Self {
        WomModel { success_probability: 0.95, retry: true, capacity_ratio: 2.10 }
    }
}

impl WomModel {
    /// Checks the parameters; keys are reported under `wom.`.
    ///
    /// `capacity_ratio` must be at least 2: a first write leaves up to half its cells programmed
    /// (the complement trick's bound), and a second write over cells whose programmed positions
    /// the encoder knows can store at most one bit per still-erased cell, so a logical page needs
    /// at least twice its size. (The paper's Table 2(a) code at exactly 200% "always fails in
    /// practice"; 210% buys the 95% success rate.)
    pub fn validate(&self) -> Result<()> {
        let p = self.success_probability;
        if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
            return Err(Error::config("wom.success_probability", p, "a probability in [0, 1]"));
        }
        let c = self.capacity_ratio;
        if !(c.is_finite() && c >= 2.0) {
            return Err(Error::config(
                "wom.capacity_ratio",
                c,
                "a finite ratio >= 2.0 (a second write needs at least twice the logical page)",
            ));
        }
        Ok(())
    }

    /// Overall probability that a page is stored as a second write: `P`, or `P + (1-P) P` with
    /// the retry.
    pub fn overall_success_probability(&self) -> f64 {
        let p = self.success_probability;
        if self.retry {
            p + (1.0 - p) * p
        } else {
            p
        }
    }

    /// Draws the outcome of storing one page as a second write. Uses one or two draws from `rng`
    /// (give it its own named stream so WOM outcomes do not shift other random streams).
    pub fn try_encode<R: Rng + ?Sized>(&self, rng: &mut R) -> EncodeOutcome {
        // `gen::<f64>() < p` rather than `gen_bool`, which panics outside [0, 1]: an unvalidated
        // model degrades (always or never succeeds) instead of aborting a run.
        if rng.gen::<f64>() < self.success_probability {
            EncodeOutcome::Success
        } else if self.retry && rng.gen::<f64>() < self.success_probability {
            EncodeOutcome::SuccessOnRetry
        } else {
            EncodeOutcome::Failed
        }
    }

    /// Encoding attempts (WOM computations) an outcome cost, for charging encoder time.
    pub fn attempts(&self, outcome: EncodeOutcome) -> u32 {
        match outcome {
            EncodeOutcome::Success => 1,
            EncodeOutcome::SuccessOnRetry => 2,
            EncodeOutcome::Failed => {
                if self.retry {
                    2
                } else {
                    1
                }
            }
        }
    }

    /// Physical pages a second write occupies for a page whose spare area is `spare_fraction` of
    /// its data size: `ceil(capacity_ratio / (1 + spare_fraction))`, i.e. 2 for the paper's 2.10
    /// and 9% spare. The FTL's pairing design requires this to be 2.
    pub fn physical_pages(&self, spare_fraction: f64) -> u32 {
        let pages = self.capacity_ratio / (1.0 + spare_fraction.max(0.0));
        // Tolerate rounding noise so that 2.18 / 1.09 counts as 2 pages, not 3.
        (pages - 1e-9).ceil().max(1.0) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    /// Encodes one symbol into a 1-byte buffer (symbols 1..3 of the byte are 0).
    fn first_symbol(s: u8) -> u8 {
        let mut cells = [0u8; 2];
        encode_first(&[s], &mut cells);
        cells[0] & 7
    }

    #[test]
    fn table_matches_paper_table_1() {
        // Paper Table 1, data written b0 b1, cells written c0 c1 c2.
        let rows = [("00", "000", "111"), ("10", "100", "011"), ("01", "010", "101"), ("11", "001", "110")];
        let bits = |s: &str| s.bytes().enumerate().fold(0u8, |acc, (j, ch)| acc | ((ch - b'0') << j));
        for (data, first, second) in rows {
            let s = bits(data);
            assert_eq!(first_symbol(s), bits(first), "first write of {data}");
            assert_eq!(SECOND[s as usize], bits(second), "second write of {data}");
        }
    }

    #[test]
    fn paper_example_11_then_01() {
        // "if the first message is 11, then 001 is written ... if the second is 01, 101 is written".
        let mut cells = [0u8; 2];
        encode_first(&[0b11], &mut cells);
        assert_eq!(cells[0] & 7, 0b100); // c2 set: "001" in the paper's c0 c1 c2 order
        encode_second(&[0b10], &mut cells).unwrap(); // data "01": b0 = 0, b1 = 1
        assert_eq!(cells[0] & 7, 0b101); // c0 and c2: "101"
        let mut out = [0u8];
        decode(&cells, &mut out);
        assert_eq!(out[0] & 3, 0b10);
    }

    #[test]
    fn every_pair_of_messages_raises_only_and_decodes() {
        for a in 0u8..4 {
            for b in 0u8..4 {
                let mut cells = [0u8; 2];
                encode_first(&[a], &mut cells);
                let before = cells;
                let mut out = [0u8];
                decode(&cells, &mut out);
                assert_eq!(out[0] & 3, a);
                assert!((cells[0] & 7).count_ones() <= 1);
                encode_second(&[b], &mut cells).unwrap();
                assert_eq!(before[0] & !cells[0], 0, "a cell fell writing {a} then {b}");
                decode(&cells, &mut out);
                assert_eq!(out[0] & 3, b, "first {a}, second {b}");
                if a == b {
                    assert_eq!(cells, before, "same value must leave the cells");
                } else {
                    assert!((cells[0] & 7).count_ones() >= 2);
                }
            }
        }
    }

    #[test]
    fn every_3_cell_state_and_value_is_consistent() {
        // Any transition the table allows raises only and decodes to the new value; the only
        // forbidden ones start from weight >= 2 with a different value.
        for c in 0u8..8 {
            for s in 0u8..4 {
                let next = NEXT3[(c * 4 + s) as usize];
                if next == NO {
                    assert!(c.count_ones() >= 2 && decode3(c) != s, "c={c:03b} s={s}");
                } else {
                    assert_eq!(c & !next, 0);
                    assert_eq!(decode3(next), s);
                }
            }
        }
    }

    #[test]
    fn cells_len_is_three_halves() {
        assert_eq!(cells_len(0), 0);
        assert_eq!(cells_len(1), 2);
        assert_eq!(cells_len(2), 3);
        assert_eq!(cells_len(3), 5);
        assert_eq!(cells_len(4096), 6144);
    }

    #[test]
    fn second_write_onto_foreign_cells_errors_and_leaves_cells() {
        let data = [0x00u8, 0x55, 0xff];
        let mut cells = [0u8; 5];
        encode_first(&data, &mut cells);
        encode_second(&[0xff, 0x55, 0x00], &mut cells).unwrap();
        // A third write of different values cannot fit (byte 0 holds 110 = value 3; value 2 needs 101).
        let snapshot = cells;
        let err = encode_second(&[0xaa, 0xaa, 0xaa], &mut cells).unwrap_err();
        assert!(matches!(err, Error::Run(ref m) if m.contains("data byte 0")), "{err}");
        assert_eq!(cells, snapshot, "a failed second write must not touch the cells");
        // All cells programmed: only value 0 (111) is readable, anything else must fail.
        let mut full = [0xffu8; 2];
        assert!(encode_second(&[0x00], &mut full).is_ok());
        assert!(encode_second(&[0x01], &mut full).is_err());
        // Error names a later byte when the earlier ones are fine.
        let mut cells = [0u8; 3];
        encode_first(&[0x00, 0x00], &mut cells);
        cells[2] = 0xff; // byte 1's upper cells all programmed
        let err = encode_second(&[0x1b, 0x1b], &mut cells).unwrap_err();
        assert!(err.to_string().contains("data byte 1"), "{err}");
    }

    #[test]
    fn odd_length_leaves_unused_nibble_alone() {
        let mut cells = [0u8, 0xa0];
        encode_first(&[0xff], &mut cells);
        assert_eq!(cells[1] & 0xf0, 0xa0);
        encode_second(&[0x00], &mut cells).unwrap();
        assert_eq!(cells[1] & 0xf0, 0xa0);
        let mut out = [0u8];
        decode(&cells, &mut out);
        assert_eq!(out[0], 0x00);
    }

    #[test]
    #[should_panic(expected = "WOM cell buffer")]
    fn short_cell_buffer_panics_with_message() {
        let mut cells = [0u8; 2];
        encode_first(&[0u8; 2], &mut cells);
    }

    #[test]
    fn complement_trick_examples() {
        let data = [0xffu8; 4];
        let mut page = [0u8; 4];
        assert!(complement_encode(&data, &mut page));
        assert_eq!(page, [0u8; 4]);
        let mut out = [0u8; 4];
        complement_decode(&page, true, &mut out);
        assert_eq!(out, data);
        // Exactly half ones: not complemented (the bound already holds).
        let data = [0x0fu8; 4];
        assert!(!complement_encode(&data, &mut page));
        assert_eq!(page, data);
    }

    #[test]
    fn model_defaults_and_validation() {
        let m = WomModel::default();
        assert_eq!(m.success_probability, 0.95);
        assert!(m.retry);
        assert_eq!(m.capacity_ratio, 2.10);
        m.validate().unwrap();
        assert!((m.overall_success_probability() - 0.9975).abs() < 1e-12);
        assert_eq!(m.physical_pages(0.09), 2);
        assert_eq!(m.physical_pages(0.0), 3);
        for bad in [-0.1, 1.5, f64::NAN] {
            let err = WomModel { success_probability: bad, ..m.clone() }.validate().unwrap_err();
            assert!(err.to_string().contains("wom.success_probability"), "{err}");
        }
        for bad in [1.5, f64::INFINITY, f64::NAN] {
            let err = WomModel { capacity_ratio: bad, ..m.clone() }.validate().unwrap_err();
            assert!(err.to_string().contains("wom.capacity_ratio"), "{err}");
        }
    }

    #[test]
    fn model_serde_defaults_and_unknown_keys() {
        let m: WomModel = serde_json::from_str(r#"{"success_probability": 0.8}"#).unwrap();
        assert_eq!(m, WomModel { success_probability: 0.8, ..WomModel::default() });
        let m: WomModel = serde_json::from_str("{}").unwrap();
        assert_eq!(m, WomModel::default());
        assert!(serde_json::from_str::<WomModel>(r#"{"succes_probability": 0.8}"#).is_err());
        let back: WomModel = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }

    fn empirical(model: &WomModel, n: u32, seed: u64) -> (f64, [u32; 3]) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut counts = [0u32; 3];
        for _ in 0..n {
            match model.try_encode(&mut rng) {
                EncodeOutcome::Success => counts[0] += 1,
                EncodeOutcome::SuccessOnRetry => counts[1] += 1,
                EncodeOutcome::Failed => counts[2] += 1,
            }
        }
        ((counts[0] + counts[1]) as f64 / n as f64, counts)
    }

    #[test]
    fn model_success_rate_matches_p() {
        let n = 200_000;
        for p in [0.75, 0.95] {
            // 5 standard deviations of a binomial proportion: deterministic seed, generous margin.
            let tol = |q: f64| 5.0 * (q * (1.0 - q) / n as f64).sqrt();
            let no_retry = WomModel { success_probability: p, retry: false, ..WomModel::default() };
            let (rate, counts) = empirical(&no_retry, n, 7);
            assert!((rate - p).abs() < tol(p), "P={p} without retry: {rate}");
            assert_eq!(counts[1], 0);
            let with_retry = WomModel { success_probability: p, retry: true, ..WomModel::default() };
            let q = p + (1.0 - p) * p;
            assert_eq!(with_retry.overall_success_probability(), q);
            let (rate, counts) = empirical(&with_retry, n, 8);
            assert!((rate - q).abs() < tol(q), "P={p} with retry: {rate} vs {q}");
            // Retries succeed on about (1-P) P of the pages.
            let r = (1.0 - p) * p;
            assert!((counts[1] as f64 / n as f64 - r).abs() < tol(r));
        }
        let always = WomModel { success_probability: 1.0, ..WomModel::default() };
        assert_eq!(empirical(&always, 1000, 1).0, 1.0);
        let never = WomModel { success_probability: 0.0, ..WomModel::default() };
        assert_eq!(empirical(&never, 1000, 1).0, 0.0);
    }

    #[test]
    fn attempts_are_counted() {
        let m = WomModel::default();
        assert_eq!(m.attempts(EncodeOutcome::Success), 1);
        assert_eq!(m.attempts(EncodeOutcome::SuccessOnRetry), 2);
        assert_eq!(m.attempts(EncodeOutcome::Failed), 2);
        let m = WomModel { retry: false, ..m };
        assert_eq!(m.attempts(EncodeOutcome::Failed), 1);
    }

    proptest! {
        #[test]
        fn random_buffers_round_trip_two_writes(
            (first, second) in (0usize..64).prop_flat_map(|n| {
                (prop::collection::vec(any::<u8>(), n), prop::collection::vec(any::<u8>(), n))
            }),
        ) {
            let mut cells = vec![0u8; cells_len(first.len())];
            encode_first(&first, &mut cells);
            // Every 3-cell group of a first write has weight <= 1.
            for k in 0..first.len() * 4 {
                let w = (0..3).filter(|j| { let c = 3 * k + j; cells[c / 8] >> (c % 8) & 1 == 1 }).count();
                prop_assert!(w <= 1);
            }
            let mut out = vec![0u8; first.len()];
            decode(&cells, &mut out);
            prop_assert_eq!(&out, &first);
            let before = cells.clone();
            encode_second(&second, &mut cells).unwrap();
            for (b, a) in before.iter().zip(&cells) {
                prop_assert_eq!(b & !a, 0, "a cell fell");
            }
            decode(&cells, &mut out);
            prop_assert_eq!(&out, &second);
        }

        #[test]
        fn second_write_on_arbitrary_cells_errors_cleanly_or_decodes(
            (data, cells) in (1usize..32).prop_flat_map(|n| {
                (prop::collection::vec(any::<u8>(), n), prop::collection::vec(any::<u8>(), cells_len(n)))
            }),
        ) {
            let mut c = cells.clone();
            match encode_second(&data, &mut c) {
                Ok(()) => {
                    for (b, a) in cells.iter().zip(&c) {
                        prop_assert_eq!(b & !a, 0);
                    }
                    let mut out = vec![0u8; data.len()];
                    decode(&c, &mut out);
                    prop_assert_eq!(out, data);
                }
                Err(_) => prop_assert_eq!(c, cells),
            }
        }

        #[test]
        fn complement_trick_bound_holds(data in prop::collection::vec(any::<u8>(), 0..128)) {
            let mut page = vec![0u8; data.len()];
            let flag = complement_encode(&data, &mut page);
            let n = 8 * data.len() as u64;
            // At most half of the n data cells plus the flag cell are programmed.
            prop_assert!(2 * (programmed_cells(&page) + flag as u64) <= n + 1);
            let mut out = vec![0u8; data.len()];
            complement_decode(&page, flag, &mut out);
            prop_assert_eq!(out, data);
        }
    }
}
