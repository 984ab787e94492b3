//! What made a result: the simulator's version, the scheduler, a hash of the configuration
//! and the identity of the trace replayed, so that a `summary.json` says what produced it.

use std::io::Read;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The `provenance` section of `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    pub flashlife_version: &'static str,
    /// The commit the core was built from (`+dirty` when tracked files differed from it);
    /// `None` for a build from a source distribution with no commit given (build.rs).
    pub build_commit: Option<&'static str>,
    /// The timing model that placed the operations.
    pub scheduler: &'static str,
    /// SHA-256 of the resolved configuration as `config.toml` holds it (below its comments).
    pub config_sha256: String,
    /// The trace replayed, when the workload is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceIdentity>,
}

/// A trace file by path, size and contents.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceIdentity {
    pub path: String,
    pub bytes: u64,
    /// SHA-256 of the file's bytes (of the compressed file for a gzip trace); `None` when the
    /// file can no longer be read when the run ends.
    pub sha256: Option<String>,
}

/// The commit recorded by build.rs, `None` when it knew none.
pub fn build_commit() -> Option<&'static str> {
    Some(env!("FLASHLIFE_BUILD_COMMIT")).filter(|c| !c.is_empty())
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl TraceIdentity {
    /// The file at `path`, hashed in 1 MiB pieces (traces may be far larger than memory).
    pub fn of(path: &str) -> TraceIdentity {
        let hashed = std::fs::File::open(path).and_then(|mut f| {
            let mut h = Sha256::new();
            let mut buf = vec![0u8; 1 << 20];
            let mut bytes = 0u64;
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    return Ok((bytes, hex(&h.finalize())));
                }
                bytes += n as u64;
                h.update(&buf[..n]);
            }
        });
        match hashed {
            Ok((bytes, sha)) => TraceIdentity { path: path.to_string(), bytes, sha256: Some(sha) },
            Err(_) => TraceIdentity {
                path: path.to_string(),
                bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
                sha256: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_identified_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, b"abc").unwrap();
        let t = TraceIdentity::of(p.to_str().unwrap());
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(t.sha256.as_deref(), Some("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        assert_eq!(t.bytes, 3);
        assert_eq!(TraceIdentity::of("/no/such/trace").sha256, None);
    }

    #[test]
    fn the_build_commit_is_a_commit_or_nothing() {
        // Built from this repository's checkout, or with FLASHLIFE_BUILD_COMMIT: a 40-digit
        // hex object name, perhaps marked dirty. From an sdist without it: nothing.
        if let Some(c) = build_commit() {
            let hash = c.strip_suffix("+dirty").unwrap_or(c);
            assert!(hash.len() >= 7 && hash.chars().all(|ch| ch.is_ascii_hexdigit()), "{c}");
        }
    }
}
