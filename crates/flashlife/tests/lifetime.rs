//! Drives that wear out: P/E limits enforced, death detected and reported, wear leveling
//! tightening the erase-count spread.

mod common;

fn to_death(wear_leveling: bool) -> flashlife::RunOutput {
    let wl = format!("wear_leveling.enabled={wear_leveling}");
    common::run(&[
        "geometry.channels=2",
        "geometry.ways=1",
        "geometry.planes=2",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "flash.page_size=4096",
        "flash.tlc.pe_limit=150",
        "capacity.overprovisioning=0.15",
        "ftl.precondition=\"full\"",
        // Half the space is hot, half holds cold data written once.
        "workload.working_set=0.5",
        "wear_leveling.threshold=8",
        &wl,
        "ftl.timing=false",
        "run.until=\"death\"",
    ])
}

#[test]
fn random_writes_run_the_drive_to_death() {
    let out = to_death(true);
    let l = &out.summary.lifetime;
    assert!(l.dead, "the drive must die");
    assert!(l.death_reason.is_some());
    assert!(l.dead_blocks > 0);
    assert!(l.host_bytes_written > 0);
    assert!(l.erase_count.max <= 150, "no block erased past its limit: {}", l.erase_count.max);
    assert_eq!(out.summary.failures.worn_out_blocks, l.dead_blocks);
}

#[test]
fn wear_leveling_tightens_erase_counts_at_death() {
    let on = to_death(true).summary.lifetime;
    let off = to_death(false).summary.lifetime;
    println!("with wear leveling: {:?}\nwithout: {:?}", on.erase_count, off.erase_count);
    assert!(
        on.erase_count.stddev < off.erase_count.stddev * 0.5,
        "{} vs {}",
        on.erase_count.stddev,
        off.erase_count.stddev
    );
    assert!(on.host_bytes_written > off.host_bytes_written, "leveled drive lives longer");
}

#[test]
fn wear_leveling_never_starves_gc_of_space() {
    // A Zipf(2) workload keeps rewriting a few pages: the blocks with invalid data are the
    // hot, worn ones that wear leveling would skip. GC must still find space (a drive once
    // died here with most of its spare space free).
    let out = common::run(&[
        "geometry.channels=2",
        "geometry.ways=1",
        "geometry.planes=2",
        "geometry.blocks_per_plane=64",
        "geometry.pages_per_block=32",
        "flash.page_size=4096",
        "workload.kind=\"zipf\"",
        "workload.zipf.alpha=2",
        "wear_leveling.enabled=true",
        "ftl.timing=false",
        "run.until=\"writes:20dw\"",
    ]);
    assert!(!out.summary.lifetime.dead, "{:?}", out.summary.lifetime.death_reason);
}
