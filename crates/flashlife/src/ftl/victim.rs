//! Garbage-collection victim selection: one trait, several policies.
//!
//! The FTL tells a policy when a block becomes a candidate (it filled up), when a
//! candidate's valid count changes, and when it stops being one (chosen, retired). Each
//! policy keeps the index it needs to choose in O(1) or close to it; `select` offers
//! candidates in the policy's order of preference to an `accept` filter (wear leveling
//! uses it to skip worn blocks) and falls back to the policy's first choice when the
//! filter refuses the first few.

use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::config::{VictimKind, VictimName};
use std::collections::VecDeque;

use crate::error::{Error, Result};

const NONE: u32 = u32::MAX;

/// Candidates looked at before a refusing filter is overruled.
const MAX_FILTERED: usize = 64;

/// What a policy may read about candidates when choosing.
pub struct VictimView<'a> {
    /// Valid units per block.
    pub valid: &'a [u32],
    /// Units each block holds at its bit mode.
    pub capacity: &'a [u32],
    /// Units each block cannot hold because of bad pages (empty: none anywhere).
    pub lost: &'a [u32],
    /// Sequence number (in blocks closed) when each block filled up.
    pub closed_seq: &'a [u64],
    /// Blocks closed so far (the current sequence number).
    pub now_seq: u64,
    /// Units the drive's live blocks hold beyond what its logical space and GC's reserve need
    /// (the capacity check that defines its death, `ftl/blocks.rs`): an erase that costs more
    /// ends the drive. `u64::MAX` where the caller does not keep that account.
    pub spare_units: u64,
}

impl VictimView<'_> {
    /// The units cleaning `block` would not free: its valid units plus its bad pages' (the
    /// policies' `valid` arguments carry the same sum, `BlockTable::victim_key`).
    #[inline]
    pub fn key(&self, block: u32) -> u32 {
        self.valid[block as usize] + self.lost.get(block as usize).copied().unwrap_or(0)
    }
}

/// A garbage-collection victim policy. The `valid` a policy is told is a block's victim key:
/// its valid units plus the units its bad pages cost it (`BlockTable::victim_key`), so a block
/// that lost pages ranks by what cleaning it frees; without bad pages, its valid units.
#[typetag::serde]
pub trait VictimPolicy: Send {
    /// `block` of pool `pool` filled up with `valid` valid units.
    fn insert(&mut self, block: u32, pool: u32, valid: u32);
    /// A candidate's valid count changed.
    fn update(&mut self, block: u32, pool: u32, old_valid: u32, new_valid: u32);
    /// `block` is no longer a candidate.
    fn remove(&mut self, block: u32, pool: u32, valid: u32);
    /// Choose a victim in `pool`, preferring ones `accept` takes; the choice stays a
    /// candidate until `remove` is called.
    fn select(&mut self, pool: u32, view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32>;
    /// `block` of pool `pool` was erased: it now holds `capacity` units at its (possibly new)
    /// bit mode and can take `remaining_life` more cycles; `capacity` 0: it was retired.
    /// Policies that weigh wear (ZombieNAND) keep what they need; others ignore it.
    fn erased(&mut self, _block: u32, _pool: u32, _capacity: u32, _remaining_life: f64) {}
    /// True when the first choice always holds the fewest valid units, so a choice with no
    /// invalid data means no candidate has any.
    fn chooses_least_valid(&self) -> bool {
        false
    }
    /// The wear class of `block`: wear leveling evens wear out only among blocks of one class
    /// (and one bit mode). 0 for every block but those whose wear the policy concentrates
    /// on purpose (ZombieNAND's early-switch pool, class 1): levelled among themselves, never
    /// against the others, and never sent cold data by the leveller.
    fn wear_class(&self, _block: u32) -> u8 {
        0
    }
    /// Can the drive afford `block`'s next erase, with `spare_units` of capacity to spare
    /// ([`VictimView::spare_units`])? False only where the policy's technique knows that erase
    /// will cost the live blocks more capacity than that (ZombieNAND: a bit drop the reserve
    /// no longer covers). Static wear leveling passes over such a block; `select` weighs it
    /// itself. Policies whose blocks never shrink at an erase: always true.
    fn erase_affordable(&self, _block: u32, _spare_units: u64) -> bool {
        true
    }
}

/// Build the policy named by `gc.victim`.
pub fn build(
    kind: VictimName,
    d_choices: u32,
    blocks: u32,
    pools: u32,
    max_capacity: u32,
    seed: u64,
) -> Result<Box<dyn VictimPolicy>> {
    let VictimName::Baseline(kind) = kind else {
        // A technique's policy is built by its technique (`techniques::ftl_plugins`).
        return Err(Error::config("gc.victim", kind, "a victim policy of the baseline, or its technique turned on"));
    };
    Ok(match kind {
        VictimKind::Greedy => Box::new(Greedy::new(blocks, pools, max_capacity)),
        VictimKind::Fifo => Box::new(Fifo::new(blocks, pools)),
        VictimKind::CostBenefit => Box::new(Scanned::new(blocks, pools, Box::new(CostBenefit))),
        VictimKind::Random => Box::new(Scanned::new(
            blocks,
            pools,
            Box::new(RandomChoices { d: d_choices, rng: Pcg64Mcg::seed_from_u64(seed) }),
        )),
    })
}

/// Greedy: fewest valid units first. Candidates sit in per-pool buckets by valid count
/// (intrusive doubly linked lists), so an invalidation moves a block in O(1) and a choice
/// scans only the empty low buckets. This is also the ZombieNAND "usage table".
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Greedy {
    buckets: u32,
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Lowest bucket that may be non-empty, per pool.
    low: Vec<u32>,
}

impl Greedy {
    pub fn new(blocks: u32, pools: u32, max_capacity: u32) -> Self {
        let buckets = max_capacity + 1;
        Greedy {
            buckets,
            head: vec![NONE; (pools * buckets) as usize],
            next: vec![NONE; blocks as usize],
            prev: vec![NONE; blocks as usize],
            low: vec![0; pools as usize],
        }
    }

    #[inline]
    fn slot(&self, pool: u32, valid: u32) -> usize {
        (pool * self.buckets + valid) as usize
    }

    #[inline]
    fn link(&mut self, block: u32, pool: u32, valid: u32) {
        let s = self.slot(pool, valid);
        let h = self.head[s];
        self.next[block as usize] = h;
        self.prev[block as usize] = NONE;
        if h != NONE {
            self.prev[h as usize] = block;
        }
        self.head[s] = block;
        let low = &mut self.low[pool as usize];
        if valid < *low {
            *low = valid;
        }
    }

    #[inline]
    fn unlink(&mut self, block: u32, pool: u32, valid: u32) {
        let (n, p) = (self.next[block as usize], self.prev[block as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            let s = self.slot(pool, valid);
            self.head[s] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }
}

#[typetag::serde]
impl VictimPolicy for Greedy {
    fn insert(&mut self, block: u32, pool: u32, valid: u32) {
        self.link(block, pool, valid);
    }

    #[inline]
    fn update(&mut self, block: u32, pool: u32, old_valid: u32, new_valid: u32) {
        self.unlink(block, pool, old_valid);
        self.link(block, pool, new_valid);
    }

    fn remove(&mut self, block: u32, pool: u32, valid: u32) {
        self.unlink(block, pool, valid);
    }

    fn chooses_least_valid(&self) -> bool {
        true
    }

    fn select(&mut self, pool: u32, _view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        let mut first = None;
        let mut seen = 0;
        let start = self.low[pool as usize];
        for v in start..self.buckets {
            let mut b = self.head[self.slot(pool, v)];
            if first.is_none() {
                if b == NONE {
                    // Every bucket below the first non-empty one is empty: remember that.
                    self.low[pool as usize] = v + 1;
                    continue;
                }
                first = Some(b);
            }
            while b != NONE {
                if accept(b) {
                    return Some(b);
                }
                seen += 1;
                if seen >= MAX_FILTERED {
                    return first;
                }
                b = self.next[b as usize];
            }
        }
        first
    }
}

/// FIFO (round-robin log cleaning): the block that filled up longest ago first.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Fifo {
    queues: Vec<VecDeque<(u32, u64)>>,
    /// Stamp of each block's current membership; queue entries with an old stamp are stale.
    stamp: Vec<u64>,
    member: Vec<bool>,
    next_stamp: u64,
}

impl Fifo {
    pub fn new(blocks: u32, pools: u32) -> Self {
        Fifo {
            queues: (0..pools).map(|_| VecDeque::new()).collect(),
            stamp: vec![0; blocks as usize],
            member: vec![false; blocks as usize],
            next_stamp: 1,
        }
    }
}

#[typetag::serde]
impl VictimPolicy for Fifo {
    fn insert(&mut self, block: u32, pool: u32, _valid: u32) {
        self.next_stamp += 1;
        self.stamp[block as usize] = self.next_stamp;
        self.member[block as usize] = true;
        self.queues[pool as usize].push_back((block, self.next_stamp));
    }

    fn update(&mut self, _block: u32, _pool: u32, _old: u32, _new: u32) {}

    fn remove(&mut self, block: u32, _pool: u32, _valid: u32) {
        self.member[block as usize] = false;
    }

    fn select(&mut self, pool: u32, _view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        let q = &mut self.queues[pool as usize];
        // Drop stale entries at the front.
        while let Some(&(b, s)) = q.front() {
            if self.member[b as usize] && self.stamp[b as usize] == s {
                break;
            }
            q.pop_front();
        }
        let first = q.front().map(|&(b, _)| b)?;
        for &(b, s) in q.iter().take(MAX_FILTERED) {
            if self.member[b as usize] && self.stamp[b as usize] == s && accept(b) {
                return Some(b);
            }
        }
        Some(first)
    }
}

/// Candidates of each pool in a dense vector with O(1) insert and remove.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MemberSet {
    members: Vec<Vec<u32>>,
    pos: Vec<u32>,
}

impl MemberSet {
    pub fn new(blocks: u32, pools: u32) -> Self {
        MemberSet { members: (0..pools).map(|_| Vec::new()).collect(), pos: vec![NONE; blocks as usize] }
    }

    pub fn insert(&mut self, block: u32, pool: u32) {
        let m = &mut self.members[pool as usize];
        self.pos[block as usize] = m.len() as u32;
        m.push(block);
    }

    pub fn remove(&mut self, block: u32, pool: u32) {
        let m = &mut self.members[pool as usize];
        let i = self.pos[block as usize];
        if i == NONE {
            return;
        }
        let last = m.pop().expect("member set out of sync");
        if last != block {
            m[i as usize] = last;
            self.pos[last as usize] = i;
        }
        self.pos[block as usize] = NONE;
    }

    pub fn members(&self, pool: u32) -> &[u32] {
        &self.members[pool as usize]
    }
}

/// A policy that chooses by scanning or sampling its pool's candidates: it keeps them in a
/// [`MemberSet`] and leaves the choice to a [`Chooser`].
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Scanned {
    set: MemberSet,
    chooser: Box<dyn Chooser>,
}

impl Scanned {
    pub fn new(blocks: u32, pools: u32, chooser: Box<dyn Chooser>) -> Self {
        Scanned { set: MemberSet::new(blocks, pools), chooser }
    }
}

/// Chooses a victim among a pool's candidates (see [`VictimPolicy::select`]).
#[typetag::serde]
pub trait Chooser: Send {
    fn choose(&mut self, members: &[u32], view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32>;
}

#[typetag::serde]
impl VictimPolicy for Scanned {
    fn insert(&mut self, block: u32, pool: u32, _valid: u32) {
        self.set.insert(block, pool);
    }

    fn update(&mut self, _block: u32, _pool: u32, _old: u32, _new: u32) {}

    fn remove(&mut self, block: u32, pool: u32, _valid: u32) {
        self.set.remove(block, pool);
    }

    fn select(&mut self, pool: u32, view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        self.chooser.choose(self.set.members(pool), view, accept)
    }
}

/// Cost-benefit (Rosenblum and Ousterhout): maximise (1 - u) * age / (1 + u), u the valid
/// share, age in blocks closed since the candidate filled. Scans the pool's candidates.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct CostBenefit;

#[typetag::serde]
impl Chooser for CostBenefit {
    fn choose(&mut self, members: &[u32], view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        let score = |b: u32| {
            let u = view.valid[b as usize] as f64 / view.capacity[b as usize].max(1) as f64;
            let age = (view.now_seq - view.closed_seq[b as usize]) as f64 + 1.0;
            (1.0 - u) * age / (1.0 + u)
        };
        let best_of = |filter: &mut dyn FnMut(u32) -> bool| {
            members.iter().copied().filter(|&b| filter(b)).max_by(|&a, &b| score(a).total_cmp(&score(b)))
        };
        best_of(accept).or_else(|| best_of(&mut |_| true))
    }
}

/// Random d-choices: sample `d` candidates uniformly, keep the one with fewest valid units
/// (d = 1 is plain random cleaning).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RandomChoices {
    d: u32,
    rng: Pcg64Mcg,
}

#[typetag::serde]
impl Chooser for RandomChoices {
    fn choose(&mut self, members: &[u32], view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
        if members.is_empty() {
            return None;
        }
        if self.d as usize >= members.len() {
            // As many choices as candidates (or more): look at each once instead of drawing
            // d times, so the work is bounded by the candidates that exist, whatever d says.
            return least_valid_accepted(members, view, accept);
        }
        let mut fallback = None;
        for _ in 0..MAX_FILTERED / self.d.max(1) as usize + 1 {
            let mut best = None;
            for _ in 0..self.d {
                let b = members[self.rng.gen_range(0..members.len())];
                if best.is_none_or(|c: u32| view.key(b) < view.key(c)) {
                    best = Some(b);
                }
            }
            let b = best?;
            fallback.get_or_insert(b);
            if accept(b) {
                return Some(b);
            }
        }
        fallback
    }
}

/// The member with the fewest valid units that `accept` takes (members in order of valid
/// count, asked at most [`MAX_FILTERED`] times), else the least valid member.
fn least_valid_accepted(members: &[u32], view: &VictimView, accept: &mut dyn FnMut(u32) -> bool) -> Option<u32> {
    let mut order: Vec<u32> = members.to_vec();
    order.sort_by_key(|&b| (view.key(b), b));
    order.iter().take(MAX_FILTERED).copied().find(|&b| accept(b)).or(order.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view<'a>(valid: &'a [u32], cap: &'a [u32], seq: &'a [u64]) -> VictimView<'a> {
        VictimView { valid, capacity: cap, lost: &[], closed_seq: seq, now_seq: 10, spare_units: u64::MAX }
    }

    #[test]
    fn greedy_picks_fewest_valid_and_tracks_updates() {
        let mut g = Greedy::new(4, 1, 8);
        let mut valid = vec![5, 3, 8, 6];
        for b in 0..4 {
            g.insert(b, 0, valid[b as usize]);
        }
        let cap = vec![8; 4];
        let seq = vec![0; 4];
        assert_eq!(g.select(0, &view(&valid, &cap, &seq), &mut |_| true), Some(1));
        g.update(2, 0, 8, 1);
        valid[2] = 1;
        assert_eq!(g.select(0, &view(&valid, &cap, &seq), &mut |_| true), Some(2));
        // A filter that refuses block 2 gets the next best.
        assert_eq!(g.select(0, &view(&valid, &cap, &seq), &mut |b| b != 2), Some(1));
        g.remove(2, 0, 1);
        g.remove(1, 0, 3);
        assert_eq!(g.select(0, &view(&valid, &cap, &seq), &mut |_| true), Some(0));
    }

    #[test]
    fn fifo_is_oldest_first_and_skips_removed() {
        let mut f = Fifo::new(4, 1);
        for b in [2, 0, 3] {
            f.insert(b, 0, 1);
        }
        let (v, c, s) = (vec![0; 4], vec![1; 4], vec![0; 4]);
        assert_eq!(f.select(0, &view(&v, &c, &s), &mut |_| true), Some(2));
        f.remove(2, 0, 1);
        assert_eq!(f.select(0, &view(&v, &c, &s), &mut |_| true), Some(0));
        f.remove(0, 0, 1);
        f.insert(0, 0, 1);
        assert_eq!(f.select(0, &view(&v, &c, &s), &mut |_| true), Some(3));
    }

    #[test]
    fn cost_benefit_prefers_old_empty_blocks() {
        let mut p = Scanned::new(3, 1, Box::new(CostBenefit));
        for b in 0..3 {
            p.insert(b, 0, 0);
        }
        let valid = vec![4, 4, 1];
        let cap = vec![8; 3];
        let seq = vec![0, 9, 9];
        // Block 0: u=.5, age 11: 0.5*11/1.5=3.67; block 2: u=.125, age 2: .875*2/1.125=1.56.
        assert_eq!(p.select(0, &view(&valid, &cap, &seq), &mut |_| true), Some(0));
    }

    #[test]
    fn member_set_removes_in_place() {
        let mut s = MemberSet::new(5, 1);
        for b in 0..5 {
            s.insert(b, 0);
        }
        s.remove(1, 0);
        s.remove(4, 0);
        let mut m = s.members(0).to_vec();
        m.sort();
        assert_eq!(m, vec![0, 2, 3]);
    }
}
