//! The time series: one row per `stats.interval`, and no row for an interval in which nothing
//! happened (reference: an invariant of the definition, every row describes requests served).

mod common;

#[test]
fn no_row_without_requests_when_the_run_ends_on_an_interval_mark() {
    // `writes:1dw` with rows every 0.05 dw: the last request closes the last interval itself.
    let out = common::run(&["run.until=\"writes:1dw\"", "stats.interval=\"0.05dw\"", "run.progress=\"off\""]);
    let rows = &out.timeseries.rows;
    assert_eq!(rows.len(), 20, "one row per 0.05 dw");
    for (i, r) in rows.iter().enumerate() {
        assert!(r.iops > 0.0 && r.mean_latency_us > 0.0, "row {i} describes no requests: {r:?}");
    }
}

#[test]
fn the_last_partial_interval_still_gets_its_row() {
    // Stopping between marks: the requests after the last mark are in a final row.
    let out = common::run(&["run.until=\"requests:30000\"", "stats.interval=\"0.05dw\"", "run.progress=\"off\""]);
    let rows = &out.timeseries.rows;
    let last = rows.last().expect("a row");
    assert!(last.iops > 0.0, "{last:?}");
    assert_eq!(last.host_bytes_written, out.summary.host.write_bytes);
}
