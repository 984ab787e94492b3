//! A run folder (`--out DIR`): where a run's results land, guarded so that they are never
//! lost, never silently replaced and never mistaken for final when they are not.
//!
//! The protocol, in order:
//! 1. The folder is created and probed for writability before the run starts (a read-only
//!    or full folder is found in a second, not after an hours-long run).
//! 2. An advisory lock (`.flashlife.lock`) is held for the whole run: a second run on the same
//!    folder is refused instead of racing the first.
//! 3. A folder that holds an interrupted run's checkpoint or finished results is refused
//!    unless the caller says `overwrite` (which clears them first) or resumes.
//! 4. Every file is written to a temporary name, flushed and renamed. A finished run writes
//!    its files, `summary.json` last (the completion marker), and only then removes its
//!    checkpoint and any `partial/` results. An interrupted run writes its files under
//!    `partial/` instead, beside the checkpoint, so no tool takes them for final.
//! 5. The per-request log (`stats.request_log`) is streamed to `requests.csv.part` and
//!    renamed `requests.csv` before the summary is written; an interrupted run leaves the
//!    `.part` file beside its checkpoint, and a resumed run goes on writing it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::checkpoint;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::sim::request_log;
use crate::sim::{Control, RunOutput, Simulator};

/// The lock file's name inside a run folder.
pub const LOCK_FILE: &str = ".flashlife.lock";
/// Where an interrupted run's results go, inside the run folder.
pub const PARTIAL_DIR: &str = "partial";
/// The completion marker: present at the top of a folder only once a run has finished.
pub const SUMMARY: &str = "summary.json";
/// Every file a run writes, in the order they are written (the summary last).
pub const OUTPUT_FILES: [&str; 5] =
    ["timeseries.csv", "erase_histogram.csv", "latency_cdf.csv", "config.toml", SUMMARY];

/// What the caller wants to do with a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// A new run: refuse a folder holding a checkpoint or results.
    New,
    /// A new run that replaces whatever results or checkpoint the folder holds.
    Overwrite,
    /// Go on with the interrupted run whose checkpoint the folder holds.
    Resume,
}

/// An open, locked run folder.
pub struct RunDir {
    path: PathBuf,
    /// Held for as long as the folder is open: the OS releases it when the process ends,
    /// however it ends.
    lock: Option<File>,
    /// The folder did not exist before: a run that fails before writing anything removes it.
    created: bool,
}

impl RunDir {
    /// Create (if needed), probe, lock and check the folder for `intent`.
    pub fn open(path: &Path, intent: Intent) -> Result<RunDir> {
        let shown = path.display().to_string();
        let existed = path.exists();
        if existed && !path.is_dir() {
            return Err(Error::io(&shown, "exists and is not a folder"));
        }
        if intent == Intent::Resume && !existed {
            return Err(Error::io(&shown, "no such folder (nothing to resume)"));
        }
        std::fs::create_dir_all(path)
            .map_err(|e| Error::io(&shown, format!("cannot create the output folder: {e}")))?;
        let mut dir = RunDir { path: path.to_path_buf(), lock: None, created: !existed };
        if let Err(e) = dir.probe().and_then(|_| dir.lock()).and_then(|_| dir.check(intent)) {
            dir.abandon();
            return Err(e);
        }
        Ok(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the run's checkpoint goes.
    pub fn checkpoint_path(&self) -> PathBuf {
        checkpoint::path_in(&self.path)
    }

    /// Write and remove a small file: the folder takes new files.
    fn probe(&self) -> Result<()> {
        let p = self.path.join(format!(".flashlife-probe-{}", std::process::id()));
        let r = File::create(&p).and_then(|mut f| f.write_all(b"probe").and_then(|_| f.sync_all()));
        let _ = std::fs::remove_file(&p);
        r.map_err(|e| Error::io(self.path.display(), format!("the output folder is not writable: {e}")))
    }

    fn lock(&mut self) -> Result<()> {
        let p = self.path.join(LOCK_FILE);
        let f =
            File::options().create(true).truncate(false).write(true).open(&p).map_err(|e| Error::io(p.display(), e))?;
        match f.try_lock() {
            Ok(()) => {
                // The holder's process id, for a person looking at a stuck folder.
                let _ = f.set_len(0).and_then(|_| (&f).write_all(format!("{}\n", std::process::id()).as_bytes()));
                self.lock = Some(f);
                Ok(())
            }
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
                self.path.display(),
                "another flashlife run is using this folder (its lock file .flashlife.lock is held): wait for it, or choose another --out",
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(p.display(), format!("cannot lock: {e}"))),
        }
    }

    fn check(&self, intent: Intent) -> Result<()> {
        let has_checkpoint = self.checkpoint_path().exists();
        let has_results = self.path.join(SUMMARY).exists() || self.path.join(PARTIAL_DIR).exists();
        let shown = self.path.display();
        match intent {
            Intent::New if has_checkpoint => Err(Error::io(
                shown,
                "holds an interrupted run's checkpoint: go on with `flashlife run --resume DIR` (flashlife.resume), or give --overwrite (overwrite=True) to discard it",
            )),
            Intent::New if has_results => Err(Error::io(
                shown,
                "holds the results of an earlier run: give --overwrite (overwrite=True) to replace them, or choose another --out",
            )),
            Intent::Overwrite => self.clear(),
            Intent::Resume if !has_checkpoint => Err(Error::Checkpoint {
                path: self.checkpoint_path().display().to_string(),
                message: if self.path.join(SUMMARY).exists() {
                    "no checkpoint here: the run in this folder has finished".into()
                } else {
                    "no checkpoint here (a run writes one when interrupted, or every run.checkpoint_every)".into()
                },
            }),
            _ => Ok(()),
        }
    }

    /// Remove an earlier run's results and checkpoint (the caller asked to overwrite). The
    /// summary goes first, so a folder half cleared never looks finished.
    fn clear(&self) -> Result<()> {
        let rm = |p: PathBuf| match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(p.display(), e)),
            _ => Ok(()),
        };
        for name in OUTPUT_FILES.iter().rev() {
            rm(self.path.join(name))?;
        }
        rm(self.checkpoint_path())?;
        rm(self.path.join(request_log::FINAL_NAME))?;
        rm(self.path.join(request_log::PART_NAME))?;
        let partial = self.path.join(PARTIAL_DIR);
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(|e| Error::io(partial.display(), e))?;
        }
        Ok(())
    }

    /// Write a finished run's files (the summary last), then remove the checkpoint and any
    /// partial results: from the first rename of the summary on, the folder is final.
    pub fn write_final(&self, out: &RunOutput) -> Result<()> {
        write_outputs(out, &self.path)?;
        let ckpt = self.checkpoint_path();
        if ckpt.exists() {
            std::fs::remove_file(&ckpt).map_err(|e| Error::io(ckpt.display(), e))?;
        }
        let partial = self.path.join(PARTIAL_DIR);
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(|e| Error::io(partial.display(), e))?;
        }
        sync_dir(&self.path);
        Ok(())
    }

    /// Write an interrupted run's files under `partial/` (the checkpoint stays at the top).
    pub fn write_partial(&self, out: &RunOutput) -> Result<()> {
        let partial = self.path.join(PARTIAL_DIR);
        std::fs::create_dir_all(&partial).map_err(|e| Error::io(partial.display(), e))?;
        write_outputs(out, &partial)?;
        sync_dir(&self.path);
        Ok(())
    }

    /// Give the folder up after a failure: remove it if this run created it and left nothing
    /// of value in it (a failed run leaves no empty `--out` behind).
    pub fn abandon(&mut self) {
        let lock = self.lock.take();
        if !self.created {
            return;
        }
        let only_ours = std::fs::read_dir(&self.path)
            .map(|entries| entries.flatten().all(|e| e.file_name() == LOCK_FILE))
            .unwrap_or(false);
        if only_ours {
            let _ = std::fs::remove_file(self.path.join(LOCK_FILE));
            drop(lock);
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// Write a run's files into `dir`, each atomically, in [`OUTPUT_FILES`] order (the summary,
/// the completion marker, last).
pub fn write_outputs(out: &RunOutput, dir: &Path) -> Result<()> {
    let mut h = String::from("erase_count,blocks\n");
    for (e, n) in &out.erase_histogram {
        h += &format!("{e},{n}\n");
    }
    let p = &out.summary.provenance;
    // Comments, so the file still reruns the experiment as it is.
    let config = format!(
        "# The resolved configuration of a flashlife {}{} run (SHA-256 of the lines below: {}).\n# Rerun it with: flashlife run config.toml --out DIR\n{}",
        p.flashlife_version,
        p.build_commit.map(|c| format!(" (commit {c})")).unwrap_or_default(),
        p.config_sha256,
        out.config.to_toml()
    );
    let texts = [out.timeseries.to_csv(), h, out.latency_cdf.to_csv(), config, out.summary.to_json()];
    for (name, text) in OUTPUT_FILES.iter().zip(texts) {
        write_atomic(&dir.join(name), text.as_bytes())?;
    }
    Ok(())
}

/// Write `bytes` to `path` through a temporary file in the same folder (flushed, then
/// renamed): a reader sees the old file or the whole new one, never a part. A failed write
/// removes its temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = File::create(&tmp).and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path.display(), e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path.display(), e)
    })
}

/// Make the renames in `dir` durable (best effort: not every filesystem lets a folder be
/// opened for that).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// How a run treats its `--out` folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirOptions {
    /// Replace an earlier run's results or checkpoint in the folder instead of refusing.
    pub overwrite: bool,
}

/// Run a configuration into the run folder `out_dir` (see the module documentation): the folder is
/// checked, locked and probed before the run starts; a finished run writes `summary.json`
/// (last), `timeseries.csv`, `erase_histogram.csv`, `latency_cdf.csv` and `config.toml` and
/// then drops its checkpoint; an interrupted one checkpoints into `out_dir/checkpoint.bin` and
/// writes its results so far under `out_dir/partial/`. A relative trace path is made absolute
/// so that the folder's `config.toml` and checkpoint work from any directory.
pub fn run_to_dir(mut cfg: Config, out_dir: &Path, options: DirOptions, control: Control) -> Result<RunOutput> {
    absolute_trace_path(&mut cfg)?;
    let intent = if options.overwrite { Intent::Overwrite } else { Intent::New };
    let mut dir = RunDir::open(out_dir, intent)?;
    let sim = Simulator::new_cancellable(cfg, control.cancel.clone());
    let result = sim.and_then(|mut sim| {
        sim.set_checkpoint_path(dir.checkpoint_path());
        finish_in_dir(sim, &dir, control)
    });
    if result.is_err() {
        dir.abandon();
    }
    result
}

/// Go on with the run whose checkpoint is in `out_dir` (see [`run_to_dir`]). A checkpoint
/// that cannot be used is refused before anything in the folder changes.
pub fn resume_dir(out_dir: &Path, control: Control) -> Result<RunOutput> {
    let dir = RunDir::open(out_dir, Intent::Resume)?;
    let sim = Simulator::resume(&dir.checkpoint_path())?;
    finish_in_dir(sim, &dir, control)
}

fn finish_in_dir(mut sim: Simulator, dir: &RunDir, control: Control) -> Result<RunOutput> {
    sim.set_control(control);
    sim.keep_checkpoint_at_end();
    sim.set_request_log(dir.path().join(request_log::PART_NAME));
    let out = sim.run()?;
    if out.summary.run.stop == "interrupted" {
        // The request log stays `requests.csv.part` beside the checkpoint: a resumed run
        // goes on writing it.
        dir.write_partial(&out)?;
    } else {
        let part = dir.path().join(request_log::PART_NAME);
        if part.exists() {
            let done = dir.path().join(request_log::FINAL_NAME);
            std::fs::rename(&part, &done).map_err(|e| Error::io(done.display(), e))?;
        }
        dir.write_final(&out)?;
    }
    Ok(out)
}

/// Make `workload.trace.path` absolute (relative to the current directory).
fn absolute_trace_path(cfg: &mut Config) -> Result<()> {
    let p = &mut cfg.workload.trace.path;
    if cfg.workload.kind == crate::workload::WorkloadKind::Trace && !p.is_empty() && Path::new(p.as_str()).is_relative()
    {
        let abs = std::path::absolute(p.as_str()).map_err(|e| Error::io(p.as_str(), e))?;
        *p = abs.display().to_string();
    }
    Ok(())
}
