//! One error type for the whole library. Every variant carries enough context for a
//! one-line message that tells the user where the problem is and what was expected.

use std::fmt;

/// Result alias used throughout flashlife.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in flashlife, with the context needed to fix it.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A configuration key holds a bad value, or is unknown.
    Config {
        /// Dotted key, e.g. `geometry.channels`.
        key: String,
        /// The offending value as the user wrote it (empty for unknown keys).
        value: String,
        /// What would have been accepted.
        expected: String,
        /// A close valid key for a misspelt one.
        suggestion: Option<String>,
    },
    /// A trace line could not be understood.
    Trace {
        /// Trace file path (or `<stdin>` / `<generator>`).
        file: String,
        /// 1-based line number.
        line: u64,
        /// Field name, e.g. `offset`.
        field: String,
        /// What was wrong and what was expected.
        message: String,
    },
    /// An I/O error on a named file.
    Io { path: String, message: String },
    /// The integrity oracle saw data that is not the version last written.
    Integrity(String),
    /// Anything else that stops a run: a message for the user.
    Run(String),
    /// A checkpoint file that cannot be used (missing, truncated, corrupt, foreign).
    Checkpoint { path: String, message: String },
    /// The run was cancelled (Ctrl-C, SIGTERM) at a point where there is nothing to keep.
    Interrupted(String),
}

impl Error {
    /// Shorthand for a configuration error without suggestion.
    pub fn config(key: impl Into<String>, value: impl fmt::Display, expected: impl Into<String>) -> Self {
        Error::Config { key: key.into(), value: value.to_string(), expected: expected.into(), suggestion: None }
    }

    /// Shorthand for a trace error.
    pub fn trace(file: impl Into<String>, line: u64, field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Trace { file: file.into(), line, field: field.into(), message: message.into() }
    }

    /// Shorthand for an I/O error on a path.
    pub fn io(path: impl fmt::Display, err: impl fmt::Display) -> Self {
        Error::Io { path: path.to_string(), message: err.to_string() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { key, value, expected, suggestion } => {
                if value.is_empty() {
                    write!(f, "config: {key}: {expected}")?;
                } else {
                    write!(f, "config: {key} = {value}: expected {expected}")?;
                }
                if let Some(s) = suggestion {
                    write!(f, " (did you mean `{s}`?)")?;
                }
                Ok(())
            }
            Error::Trace { file, line, field, message } => write!(f, "{file}:{line}: {field}: {message}"),
            Error::Io { path, message } => write!(f, "{path}: {message}"),
            Error::Integrity(m) => write!(f, "integrity oracle: {m}"),
            Error::Run(m) => write!(f, "{m}"),
            Error::Checkpoint { path, message } => write!(f, "checkpoint {path}: {message}"),
            Error::Interrupted(m) => write!(f, "interrupted {m}"),
        }
    }
}

impl std::error::Error for Error {}
