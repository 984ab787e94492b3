//! Records the commit the core is built from, for `summary.json`'s provenance.
//!
//! `FLASHLIFE_BUILD_COMMIT` wins when set (a release build from a source distribution, which
//! has no `.git`); otherwise `git` is asked about the checkout the crate sits in. A build from
//! a tree whose tracked files differ from that commit records it with `+dirty`. Without either,
//! the commit is left empty and the summary says `null`.
//!
//! The script reruns when the checkout moves to another commit (HEAD, the branch it names,
//! packed refs) or when the crate's own files change (so `+dirty` follows edits): a commit
//! that changes nothing in the crate still rebuilds it, which is the price of a result that
//! names its code.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

/// Ask cargo to rerun this script when `git_path` (a path inside the git directory) changes.
fn watch_git_path(git_path: &str) {
    // `--path-format` needs git 2.31; older ones answer relative to the crate's folder.
    let p = git(&["rev-parse", "--path-format=absolute", "--git-path", git_path])
        .or_else(|| git(&["rev-parse", "--git-path", git_path]))
        .map(|p| Path::new(env!("CARGO_MANIFEST_DIR")).join(p));
    if let Some(p) = p.filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn commit_from_git() -> Option<String> {
    let commit = git(&["rev-parse", "HEAD"])?;
    watch_git_path("HEAD");
    watch_git_path("packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch_git_path(&branch);
    }
    // Tracked files only: build outputs and scratch files do not make a build dirty.
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{commit}+dirty") } else { commit })
}

fn main() {
    println!("cargo:rerun-if-env-changed=FLASHLIFE_BUILD_COMMIT");
    for p in ["src", "presets", "Cargo.toml", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
    }
    let commit = std::env::var("FLASHLIFE_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .map(|c| c.trim().to_string())
        .or_else(commit_from_git)
        .unwrap_or_default();
    println!("cargo:rustc-env=FLASHLIFE_BUILD_COMMIT={commit}");
}
