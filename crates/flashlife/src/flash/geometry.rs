//! Drive geometry and the dense numbering of its parts.
//!
//! Dies are numbered channel-major (`die = (channel * ways + way) * dies + die_in_chip`),
//! planes die-major, blocks plane-major: block `b` lives in plane `b / blocks_per_plane`.

/// Derived geometry with O(1) conversions between block, plane, die and channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Geometry {
    pub channels: u32,
    pub ways: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
}

/// (`Geometry::new` makes one from the `[geometry]` section: `config/flash_parts.rs`.)
impl Geometry {
    #[inline]
    pub fn dies(&self) -> u32 {
        self.channels * self.ways * self.dies_per_chip
    }

    #[inline]
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }

    #[inline]
    pub fn blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }

    #[inline]
    pub fn pages(&self) -> u64 {
        self.blocks() as u64 * self.pages_per_block as u64
    }

    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }

    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        plane / self.planes_per_die
    }

    /// The planes of `die` (the inverse of [`Geometry::die_of_plane`]).
    #[inline]
    pub fn planes_of_die(&self, die: u32) -> std::ops::Range<u32> {
        let first = die * self.planes_per_die;
        first..first + self.planes_per_die
    }

    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die / (self.ways * self.dies_per_chip)
    }

    /// Planes in the order host writes stripe over them: channel first, then way, then die,
    /// then plane, so consecutive pages land on different buses before sharing one.
    pub fn stripe_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.planes() as usize);
        for plane in 0..self.planes_per_die {
            for die in 0..self.dies_per_chip {
                for way in 0..self.ways {
                    for ch in 0..self.channels {
                        let d = (ch * self.ways + way) * self.dies_per_chip + die;
                        order.push(d * self.planes_per_die + plane);
                    }
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_round_trips() {
        let g = Geometry {
            channels: 3,
            ways: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 5,
            pages_per_block: 4,
        };
        assert_eq!(g.dies(), 12);
        assert_eq!(g.planes(), 24);
        assert_eq!(g.blocks(), 120);
        let order = g.stripe_order();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..24).collect::<Vec<_>>());
        // The first `channels` planes of the stripe are on distinct channels.
        let chans: Vec<u32> = order[..3].iter().map(|&p| g.channel_of_die(g.die_of_plane(p))).collect();
        assert_eq!(chans, vec![0, 1, 2]);
        assert_eq!(g.plane_of_block(119), 23);
    }
}
