//! The per-request latency log (`stats.request_log`): one CSV row per request as it
//! finishes, for users who want every request rather than histograms.
//!
//! Rows are streamed to `requests.csv.part` in the run folder (a log of millions of
//! requests is not held in memory); a finished run renames it to `requests.csv` before its
//! summary is written. A checkpoint records how many bytes of the log were flushed, and a
//! resumed run cuts the file back to that length, so rows written after the checkpoint by a
//! run that then crashed are not repeated. A write error (a full disk) is kept and fails the
//! run at its next checkpoint or at its end, never silently.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::workload::IoKind;

/// The log's header row.
pub const HEADER: &str = "arrival_ns,issue_ns,finish_ns,op,bytes,behind_background_ns,hard_threshold\n";

/// The file a run folder's log is written to while the run goes on.
pub const PART_NAME: &str = "requests.csv.part";
/// ... and its name once the run has finished.
pub const FINAL_NAME: &str = "requests.csv";

/// What the scheduler knows of a request's wait behind background work (the queued
/// scheduler; the reservation scheduler does not separate it, and its cells stay empty).
#[derive(Debug, Clone, Copy)]
pub struct BehindBackground {
    pub ns: u64,
    pub hard_threshold: bool,
}

pub(super) struct RequestLog {
    out: BufWriter<File>,
    path: PathBuf,
    /// Bytes written so far (flushed or not).
    bytes: u64,
    /// The first write error, reported at the next flush.
    error: Option<std::io::Error>,
    /// The row being formatted (reused: no allocation per request).
    line: Vec<u8>,
}

impl RequestLog {
    /// A new log at `path` (replacing any file there), header written.
    pub fn create(path: &Path) -> Result<RequestLog> {
        let f = File::create(path).map_err(|e| Error::io(path.display(), e))?;
        let mut log = RequestLog {
            out: BufWriter::with_capacity(1 << 16, f),
            path: path.into(),
            bytes: 0,
            error: None,
            line: Vec::new(),
        };
        log.write(HEADER.as_bytes());
        Ok(log)
    }

    /// The log at `path` as a checkpoint left it: `bytes` long (anything after is cut off).
    pub fn resume(path: &Path, bytes: u64) -> Result<RequestLog> {
        let io = |e| Error::io(path.display(), e);
        let mut f = OpenOptions::new().write(true).open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        if len < bytes {
            return Err(Error::Run(format!(
                "{}: the request log is {len} bytes, shorter than the {bytes} the checkpoint recorded (was it changed?)",
                path.display()
            )));
        }
        f.set_len(bytes).map_err(io)?;
        f.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(RequestLog {
            out: BufWriter::with_capacity(1 << 16, f),
            path: path.into(),
            bytes,
            error: None,
            line: Vec::new(),
        })
    }

    fn write(&mut self, b: &[u8]) {
        if self.error.is_none() {
            match self.out.write_all(b) {
                Ok(()) => self.bytes += b.len() as u64,
                Err(e) => self.error = Some(e),
            }
        }
    }

    /// One finished request.
    pub fn row(
        &mut self,
        arrival: u64,
        issue: u64,
        finish: u64,
        kind: IoKind,
        bytes: u64,
        behind: Option<BehindBackground>,
    ) {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        let op = match kind {
            IoKind::Read => "read",
            IoKind::Write => "write",
            IoKind::Trim => "trim",
        };
        // Writing into a Vec cannot fail.
        let _ = write!(line, "{arrival},{issue},{finish},{op},{bytes},");
        let _ = match behind {
            Some(b) => writeln!(line, "{},{}", b.ns, b.hard_threshold),
            None => line.write_all(b",\n"),
        };
        self.write(&line);
        self.line = line;
    }

    /// Flush everything written to the disk; returns the log's length. A write error since
    /// the last flush is returned here.
    pub fn flush(&mut self) -> Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(Error::io(self.path.display(), e));
        }
        self.out.flush().map_err(|e| Error::io(self.path.display(), e))?;
        self.out.get_ref().sync_data().map_err(|e| Error::io(self.path.display(), e))?;
        Ok(self.bytes)
    }
}
