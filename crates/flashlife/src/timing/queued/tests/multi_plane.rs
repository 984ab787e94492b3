//! Multi-plane operations, by hand-computed timelines: two planes' programs (or reads) of
//! the same page run as one die operation, the channel carrying both pages.

use super::*;

/// One die of two planes (blocks 0..8 on plane 0, 8..16 on plane 1), 1 ms programs, 50 us
/// reads, 4096 B at 4096 MB/s (999 ns per page).
fn die(multi_plane: bool) -> Queued {
    let mut p = params(1, 1, 4096.0, None);
    p.multi_plane = multi_plane.then_some(MultiPlane { blocks_per_plane: 8, planes_per_die: 2 });
    Queued::new(times(50.0, 1000.0, 3000.0), p, Box::new(Priority::default()))
}

fn prog(block: u32, page: u32) -> Transaction {
    Transaction::program(0, block, page, BitMode::Slc, 4096, Cause::Host)
}

fn finishes(q: &mut Queued) -> Vec<(u32, u64)> {
    let mut f: Vec<(u32, u64)> = drain(q).iter().map(|c| (c.token, c.finish)).collect();
    f.sort();
    f
}

#[test]
fn two_planes_programs_of_one_page_run_as_one_operation() {
    let x = 999; // one page over the channel
    let mut q = die(true);
    q.submit(&prog(1, 5), 0, 1);
    q.submit(&prog(9, 5), 0, 2); // plane 1, same page
    assert_eq!(finishes(&mut q), vec![(1, 2 * x + 1_000_000), (2, 2 * x + 1_000_000)]);
    assert_eq!(q.stats().multi_plane_ops, 1);
    // Without multi-plane operations: one after the other.
    let mut q = die(false);
    q.submit(&prog(1, 5), 0, 1);
    q.submit(&prog(9, 5), 0, 2);
    assert_eq!(finishes(&mut q), vec![(1, x + 1_000_000), (2, 2 * (x + 1_000_000))]);
    assert_eq!(q.stats().multi_plane_ops, 0);
}

#[test]
fn only_the_same_page_of_another_plane_pairs() {
    let x = 999;
    let mut q = die(true);
    q.submit(&prog(1, 5), 0, 1);
    q.submit(&prog(2, 5), 0, 2); // same plane
    q.submit(&prog(9, 6), 0, 3); // other plane, other page
    let f = finishes(&mut q);
    assert_eq!(f[0], (1, x + 1_000_000));
    assert_eq!(f[2].1, 3 * (x + 1_000_000), "nothing paired: three operations in turn");
    assert_eq!(q.stats().multi_plane_ops, 0);
}

#[test]
fn two_planes_reads_sense_together_and_send_both_pages() {
    let x = 999;
    let mut q = die(true);
    q.submit(&Transaction::read(0, 3, 7, BitMode::Slc, 4096, Cause::Host), 0, 1);
    q.submit(&Transaction::read(0, 12, 7, BitMode::Slc, 4096, Cause::Host), 0, 2);
    // One sense, then both pages over the channel.
    assert_eq!(finishes(&mut q), vec![(1, 50_000 + 2 * x), (2, 50_000 + 2 * x)]);
}
