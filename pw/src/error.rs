//! The one error type of ctensor-pw: every message says what was expected and what was
//! given, so that the program can print it as one line.

use std::path::PathBuf;

/// Why a plane-wave calculation could not be set up or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum PwError {
    /// A value of the input that cannot be used.
    #[error("input: {what}: expected {expected}, given {given}")]
    Input {
        /// The input field (e.g. `ecut_ha`, `atoms[1]`).
        what: String,
        /// What a valid value looks like.
        expected: String,
        /// The value given.
        given: String,
    },
    /// A pseudopotential file that cannot be read or parsed.
    #[error("pseudopotential {path}: line {line}: {message}")]
    Pseudo {
        /// The file.
        path: PathBuf,
        /// The 1-based line the problem is on (0: the file as a whole).
        line: usize,
        /// What was expected there and what was found.
        message: String,
    },
    /// A file that cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A JSON input that is not well formed or has fields of the wrong kind.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// serde_json's message, with line and column.
        source: serde_json::Error,
    },
    /// libxc refused a functional.
    #[error("xc: {0}")]
    Xc(String),
    /// The SCF did not converge within its step limit.
    #[error("the SCF did not converge in {steps} steps: last energy change {de:.3e} Ha, density residual {residual:.3e} (limits {etol:.1e} Ha, {rtol:.1e})")]
    NotConverged {
        /// Steps taken.
        steps: usize,
        /// The last energy change (Ha).
        de: f64,
        /// The last density residual.
        residual: f64,
        /// The energy tolerance asked for.
        etol: f64,
        /// The residual tolerance asked for.
        rtol: f64,
    },
    /// An error of a ctensor operation.
    #[error(transparent)]
    Tensor(#[from] ctensor::Error),
}

/// The result type of ctensor-pw.
pub type Result<T> = std::result::Result<T, PwError>;

/// An [`PwError::Input`] for field `what`.
pub(crate) fn input(
    what: impl Into<String>,
    expected: impl Into<String>,
    given: impl Into<String>,
) -> PwError {
    PwError::Input {
        what: what.into(),
        expected: expected.into(),
        given: given.into(),
    }
}
