//! The one error type of ctensor. Variants are grouped by cause and carry what was
//! expected and what was given in fields, so callers can match on them and messages
//! can say both.

use crate::device::DeviceType;
use crate::dtype::DataType;

/// Everything that can go wrong in ctensor. Bad input is always reported through this
/// type: nothing panics, aborts or exits on bad input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- shape -------------------------------------------------------------------
    /// Two shapes that must agree do not.
    #[error("{op}: shape mismatch: expected {expected}, got {}", shape_list(.got))]
    ShapeMismatch {
        /// The operation that failed.
        op: &'static str,
        /// The shape (or rule) that was required, in words.
        expected: String,
        /// The shapes that were given, one per operand concerned.
        got: Vec<Vec<usize>>,
    },
    /// Operands whose shapes do not broadcast together.
    #[error(
        "{op}: shapes {} do not broadcast (sizes must be equal or 1 at each axis, counted \
         from the right)",
        shape_list(.shapes)
    )]
    Broadcast {
        /// The operation that failed.
        op: &'static str,
        /// The operands' shapes.
        shapes: Vec<Vec<usize>>,
    },
    /// An operand that must be a matrix, a square matrix or a stack of them is not.
    #[error("{op}: expected {need}, got shape {shape:?}")]
    NotAMatrix {
        /// The operation that failed.
        op: &'static str,
        /// The operand's shape.
        shape: Vec<usize>,
        /// What the operation takes, e.g. "a square matrix (rank 2, n × n)".
        need: &'static str,
    },
    /// An index, dimension or range lies outside its valid range.
    #[error("{op}: {what} {given} is out of range: expected {valid}")]
    OutOfRange {
        /// The operation that failed.
        op: &'static str,
        /// What the number is ("dimension", "index along dimension 1", ...).
        what: String,
        /// The number given.
        given: i64,
        /// The valid range, in words or as `lo..hi`.
        valid: String,
    },
    /// An element count or byte size does not fit in 64 bits (or `isize`), or a value
    /// does not fit the data type it must be stored in.
    #[error("{op}: overflow: {what}")]
    Overflow {
        /// The operation that failed.
        op: &'static str,
        /// What overflowed, with the numbers involved.
        what: String,
    },
    /// A request this implementation does not carry out (a layout, a combination of
    /// arguments or a size it has no path for), though it is meaningful.
    #[error("{op}: not supported: {what}")]
    Unsupported {
        /// The operation that failed.
        op: &'static str,
        /// What is not supported, and what is instead.
        what: String,
    },
    /// An argument is malformed in a way that no other variant describes.
    #[error("{op}: invalid argument: expected {expected}, got {given}")]
    InvalidArgument {
        /// The operation that failed.
        op: &'static str,
        /// What was required.
        expected: String,
        /// What was given.
        given: String,
    },
    /// The operation needs dense memory in row-major (or column-major) order.
    #[error("{op}: expected a contiguous tensor, got shape {shape:?} with strides {strides:?}")]
    NotContiguous {
        /// The operation that failed.
        op: &'static str,
        /// The tensor's shape.
        shape: Vec<usize>,
        /// The tensor's strides, in elements.
        strides: Vec<usize>,
    },

    // ---- data type ---------------------------------------------------------------
    /// Two data types that must agree do not.
    #[error("{op}: data type mismatch: expected {expected}, got {got}")]
    DTypeMismatch {
        /// The operation that failed.
        op: &'static str,
        /// The data type required.
        expected: DataType,
        /// The data type given.
        got: DataType,
    },
    /// An operation that is not defined for a data type (e.g. `exp` of an integer, LAPACK
    /// on `f16`).
    #[error("{op}: data type {dtype} is not supported: expected one of {supported}")]
    UnsupportedDType {
        /// The operation that failed.
        op: &'static str,
        /// The data type given.
        dtype: DataType,
        /// The data types the operation supports.
        supported: &'static str,
    },
    /// A result of type `from` cannot be stored in an output (an in-place target, an
    /// `out` tensor) of type `to` without dropping a kind: complex into real, or
    /// floating-point into integer.
    #[error("{op}: a result of type {from} cannot be stored in a {to} output (complex into real and floating into integer are refused; cast explicitly)")]
    CannotCast {
        /// The operation that failed.
        op: &'static str,
        /// The data type of the result.
        from: DataType,
        /// The data type of the output.
        to: DataType,
    },
    /// A name (of a data type, a device, ...) that is not known.
    #[error("unknown {kind} '{given}': expected {expected}")]
    UnknownName {
        /// What kind of name it is.
        kind: &'static str,
        /// The name given.
        given: String,
        /// The names accepted.
        expected: &'static str,
    },

    // ---- device ------------------------------------------------------------------
    /// Operands of one operation live on different devices; ctensor never moves data
    /// between devices behind the caller's back (use `to_device`).
    #[error("{op}: device mismatch: expected every operand on {expected}, got one on {got}")]
    DeviceMismatch {
        /// The operation that failed.
        op: &'static str,
        /// The device of the first operand (or of the output).
        expected: DeviceType,
        /// The device of the operand that differs.
        got: DeviceType,
    },
    /// The device cannot be used: no driver, no device, or not built in.
    #[error("device {device} is unavailable: {reason}")]
    DeviceUnavailable {
        /// The device asked for.
        device: DeviceType,
        /// Why it cannot be used.
        reason: String,
    },
    /// A call into the CUDA driver, cuBLAS, cuSOLVER or NVRTC failed.
    #[error("{library}: {call} failed: {detail}")]
    Cuda {
        /// The library: `CUDA driver`, `cuBLAS`, `cuSOLVER` or `NVRTC`.
        library: &'static str,
        /// The function called (or the kernel launched).
        call: String,
        /// The library's own error name (e.g. `CUDA_ERROR_OUT_OF_MEMORY`), and for NVRTC
        /// the compiler log.
        detail: String,
    },

    // ---- MPI ---------------------------------------------------------------------
    /// The ranks of a communicator called one operation with operands (or arguments)
    /// that do not agree. Every rank returns this error, so none is left waiting.
    #[error("{op}: the ranks disagree on the {what}: rank 0 has {first}, rank {rank} has {got}")]
    RanksDisagree {
        /// The operation that failed.
        op: &'static str,
        /// What differs: "data type", "shape", "root", ...
        what: &'static str,
        /// Rank 0's value (the one every rank must match).
        first: String,
        /// The first rank that differs.
        rank: usize,
        /// Its value.
        got: String,
    },
    /// A call into the MPI library failed, or another rank could not take part in a
    /// collective operation (its own call returned the reason).
    #[error("{op}: MPI: {detail}")]
    Mpi {
        /// The operation that failed.
        op: &'static str,
        /// The MPI function and the library's error string, or which rank failed.
        detail: String,
    },

    // ---- einsum ------------------------------------------------------------------
    /// A malformed einsum equation, with the byte position of the problem.
    #[error("einsum: bad equation \"{equation}\" at position {position}: expected {expected}")]
    EinsumParse {
        /// The equation given.
        equation: String,
        /// Byte offset of the offending character (the length for a missing part).
        position: usize,
        /// What would have been valid there.
        expected: String,
    },

    // ---- values ------------------------------------------------------------------
    /// An input that will be read holds NaN or an infinity where the operation needs
    /// finite values (the eigensolvers, Cholesky, LU). The check can be turned off for
    /// data known to be finite (`ctensor_kernels::lapack::set_check_finite`).
    #[error("{op}: expected finite values in {part} of {operand}, got {value} at ({row}, {col})")]
    NonFinite {
        /// The operation that failed.
        op: &'static str,
        /// The argument, e.g. `a`.
        operand: &'static str,
        /// The part that is read: "the lower triangle", "the whole matrix", ...
        part: &'static str,
        /// Row of the first non-finite entry (0-based, column-major order of search).
        row: usize,
        /// Its column.
        col: usize,
        /// The value found ("NaN", "inf", "-inf", or a complex pair).
        value: String,
    },

    /// Values are read before anything wrote them (a mirrored tensor that no
    /// `write_only` or `write` has initialised yet).
    #[error("{op}: {what} is read before it was written: {hint}")]
    Uninitialized {
        /// The operation that failed.
        op: &'static str,
        /// What was read.
        what: String,
        /// How to give it values first.
        hint: &'static str,
    },

    // ---- BLAS / LAPACK -------------------------------------------------------------
    /// A LAPACK routine returned a non-zero `info`.
    #[error("{routine} failed with info = {info}: {detail}")]
    Lapack {
        /// The LAPACK routine, e.g. `zheevd`.
        routine: &'static str,
        /// The `info` it returned: `-k` means argument `k` was illegal, a positive value
        /// is a numerical failure whose meaning depends on the routine.
        info: i64,
        /// What `info` means for this routine.
        detail: String,
    },

    // ---- ctensor's own bugs ------------------------------------------------------
    /// Something that cannot happen unless ctensor itself has a bug (a helper thread
    /// panicked, a solver returned less than it promised). Please report it.
    #[error("{op}: internal error (a bug in ctensor, please report it): {what}")]
    Internal {
        /// The operation that failed.
        op: &'static str,
        /// What went wrong.
        what: String,
    },

    // ---- numerically singular input ----------------------------------------------
    /// A linear system whose matrix is singular to working precision: the reciprocal
    /// condition estimate (1-norm) is below the threshold (the dtype's epsilon).
    #[error("{op}: the matrix is singular to working precision: reciprocal condition estimate {rcond:e} < {threshold:e}")]
    IllConditioned {
        /// The operation that failed.
        op: &'static str,
        /// LAPACK's estimate of `1 / (‖A‖₁ ‖A⁻¹‖₁)`.
        rcond: f64,
        /// The smallest value accepted.
        threshold: f64,
    },

    // ---- files -------------------------------------------------------------------
    /// Reading or writing a file failed in the operating system (not found, no
    /// permission, disk full, ...).
    #[error("{op}: {path}: {detail}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The file (or `<reader>`/`<writer>` for a stream).
        path: String,
        /// What the operating system said.
        detail: String,
    },
    /// A file's contents are not what its format requires (wrong magic, an unknown
    /// version or element type, a header that does not parse, fewer data bytes than the
    /// header promises).
    #[error("{op}: {path}: malformed file: expected {expected}, got {got}")]
    BadFile {
        /// The operation that failed.
        op: &'static str,
        /// The file (or `<reader>` for a stream), with the archive member if any.
        path: String,
        /// What the format requires.
        expected: String,
        /// What the file holds.
        got: String,
    },

    // ---- memory ------------------------------------------------------------------
    /// A borrow of a tensor's memory conflicts with one that is still alive (through
    /// this tensor or another that shares its buffer).
    #[error("{op}: cannot borrow the tensor's memory {requested}: it is already borrowed {held}")]
    BorrowConflict {
        /// The operation that asked for the borrow.
        op: &'static str,
        /// The borrow asked for: "mutably" or "immutably".
        requested: &'static str,
        /// The borrow that is alive, e.g. "mutably" or "immutably (2 readers)".
        held: String,
    },
    /// Memory could not be allocated.
    #[error("allocation of {bytes} bytes (alignment {align}) on {device} failed: {reason}")]
    Alloc {
        /// The device.
        device: DeviceType,
        /// Bytes requested.
        bytes: usize,
        /// Alignment requested.
        align: usize,
        /// What the allocator said.
        reason: String,
    },
}

impl Error {
    /// The same error attributed to `op`: for an operation built on another (`matmul`
    /// on einsum), so the message names what the caller called.
    pub fn in_op(mut self, new_op: &'static str) -> Error {
        use Error::*;
        match &mut self {
            ShapeMismatch { op, .. }
            | Broadcast { op, .. }
            | NotAMatrix { op, .. }
            | Unsupported { op, .. }
            | OutOfRange { op, .. }
            | Overflow { op, .. }
            | InvalidArgument { op, .. }
            | NotContiguous { op, .. }
            | DTypeMismatch { op, .. }
            | UnsupportedDType { op, .. }
            | DeviceMismatch { op, .. }
            | NonFinite { op, .. }
            | IllConditioned { op, .. }
            | Internal { op, .. }
            | CannotCast { op, .. }
            | BorrowConflict { op, .. }
            | Io { op, .. }
            | BadFile { op, .. }
            | Uninitialized { op, .. }
            | RanksDisagree { op, .. }
            | Mpi { op, .. } => *op = new_op,
            _ => {}
        }
        self
    }
}

/// Shapes in messages: `[2, 3]`, or `[2, 3] and [4]` for several.
fn shape_list(shapes: &[Vec<usize>]) -> String {
    let each: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
    each.join(" and ")
}

/// `Result` with ctensor's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_expected_and_given() {
        let e = Error::DTypeMismatch {
            op: "sync",
            expected: DataType::Double,
            got: DataType::Float,
        };
        assert_eq!(
            e.to_string(),
            "sync: data type mismatch: expected f64, got f32"
        );
        let e = Error::OutOfRange {
            op: "narrow",
            what: "dimension".into(),
            given: 3,
            valid: "0..2".into(),
        };
        assert_eq!(
            e.to_string(),
            "narrow: dimension 3 is out of range: expected 0..2"
        );
    }
}
