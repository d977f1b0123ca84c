//! Facts about the linked OpenBLAS, and the guard against the `?gemv` over-read of
//! OpenBLAS 0.3.21–0.3.23 on x86-64 and the `?symv` over-read of its `Prescott` kernels.
//!
//! Those releases, built with GCC 12 or newer (as Debian 12's `0.3.21+ds-4` is), have
//! x86-64 `?gemv` C kernels miscompiled by GCC's tree vectorizer: OpenBLAS issue #4013,
//! fixed in 0.3.24 by compiling them with `-fno-tree-vectorize` ("worked around
//! miscompilations of GEMV/SYMV kernels by gcc's tree-vectorizer", 0.3.24 changelog;
//! 0.3.22 had done it for macOS and Windows only). Measured here on 0.3.21 (Cooperlake,
//! SkylakeX, Zen and Haswell kernels, `OPENBLAS_CORETYPE`) by placing each operand flush
//! against a `PROT_NONE` page, over 25 392 shapes per routine (m, n up to 1025, leading
//! dimensions m and m + 3, `incx` 1, 2, 7, 300, `incy` 1, 3):
//! - `cgemv`/`zgemv` with `trans = 'N'` read **exactly one `incx` stride past the last
//!   element of `x`** whenever `m mod 4 = 2` (2 530 of the placements fault);
//! - `chemv`/`zhemv` read one element past `x` or `y` for some small orders;
//! - transposed complex gemv, and every real `?gemv`/`?symv`, stay in bounds.
//!
//! Inside LAPACK, `x` is a row or column of the matrix being reduced (`A`, the
//! eigenvector block `Z`, `B`) or of the panel `W` in the workspace, with stride `1` or
//! the leading dimension, so the stray read lands at most one leading dimension past the
//! end of that array: `?hetrd` → `?latrd` (`heevd`, `heevr`, `hegvd`) segfaults when `A`
//! ends near a page boundary (`uplo = 'U'`, n = 300 crashed 20 of 20 runs in plain C).
//!
//! A second over-read, measured on the same 0.3.21 library with the `Prescott` kernels
//! (the generic x86-64 family that DYNAMIC_ARCH falls back to when it does not know the
//! CPU: a virtual machine reporting a bare "Intel(R) Xeon(R) Processor" got them, and
//! `ssyevd` with n = 6 segfaulted there): `ssymv`/`dsymv` read up to 32 bytes past the
//! end of `A` (both triangles) or of `y` (`uplo = 'L'`, `incy = 1`, n ≥ 4; `'U'` for
//! some n). `?sytrd` calls them, so `syevd`, `syevr`, `sygvd` on guarded memory fault. The
//! other real level-1/2 routines (`dot`, `nrm2`, `asum`, `iamax`, `axpy`, `scal`,
//! `copy`, `swap`, `gemv` both ways, `syr2`, `ger`, `trmv`, `rot`) stayed in bounds with
//! every operand flush against a guard page, n up to 70 and increments 1, 2, 3. Real
//! types are therefore guarded whenever the `Prescott` kernels are in use; releases after
//! 0.3.21 were not measured, so the guard does not rely on the version there.
//!
//! The guard: on an affected build every host LAPACK kernel of an affected type runs on
//! copies of its matrices that carry a tail of one leading dimension (plus a margin) of
//! mapped memory, and allocates its workspaces with the same tail; the BLAS `gemv`
//! kernel packs `x` into a padded buffer. The copies cost `O(n²)` against the routines'
//! `O(n³)` (see `make bench`). `CTENSOR_OPENBLAS_GUARD=0` turns the guard off and `=1`
//! forces it on (both for tests); anything else leaves the version check in charge.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::OnceLock;

use ctensor_base::{DataType, Scalar};

extern "C" {
    // OpenBLAS's own description: "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Haswell".
    fn openblas_get_config() -> *const std::ffi::c_char;
    // The kernel family in use ("Haswell", "Cooperlake", ...).
    fn openblas_get_corename() -> *const std::ffi::c_char;
}

/// Extra elements past one leading dimension in every padded tail: the kernels read in
/// vectors of up to 64 bytes, so a margin of a few vectors of the widest type.
const TAIL_MARGIN: usize = 64;

fn c_string(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: OpenBLAS returns a pointer to a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// OpenBLAS's configuration string, e.g. `OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH
/// NO_AFFINITY Cooperlake MAX_THREADS=64`.
pub fn config() -> String {
    // SAFETY: a plain query with no arguments.
    c_string(unsafe { openblas_get_config() })
}

/// The CPU kernel family OpenBLAS chose at load time (e.g. `Haswell`).
pub fn corename() -> String {
    // SAFETY: a plain query with no arguments.
    c_string(unsafe { openblas_get_corename() })
}

/// The `(major, minor, patch)` version in an OpenBLAS configuration string.
pub fn parse_version(config: &str) -> Option<(u32, u32, u32)> {
    let word = config
        .split_whitespace()
        .skip_while(|w| *w != "OpenBLAS")
        .nth(1)?;
    let mut parts = word
        .trim_end_matches(|c: char| !c.is_ascii_digit())
        .split('.')
        .map(|p| p.parse::<u32>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().flatten().unwrap_or(0),
    ))
}

/// Whether a build of this version on this architecture has the `?gemv` over-read:
/// x86-64 releases before 0.3.24 (0.3.21 is the one known to ship built with GCC 12;
/// older ones built with GCC 12 have the same unguarded kernels).
pub fn version_is_affected(version: (u32, u32, u32), x86_64: bool) -> bool {
    x86_64 && version < (0, 3, 24)
}

/// Whether the guard is on in this process (decided once): the environment override,
/// else the version check on the linked library. An unreadable version counts as
/// affected, since the guard only costs copies.
pub fn gemv_guard_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(
        || match std::env::var("CTENSOR_OPENBLAS_GUARD").as_deref() {
            Ok("0") => false,
            Ok("1") => true,
            _ => parse_version(&config())
                .is_none_or(|v| version_is_affected(v, cfg!(target_arch = "x86_64"))),
        },
    )
}

/// Whether the real-type guard is on in this process (decided once): the environment
/// override, else whether OpenBLAS runs its `Prescott` kernels, whose `?symv` over-reads
/// (see the module docs).
pub fn symv_guard_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(
        || match std::env::var("CTENSOR_OPENBLAS_GUARD").as_deref() {
            Ok("0") => false,
            Ok("1") => true,
            _ => prescott_kernels(),
        },
    )
}

/// Whether OpenBLAS runs its `Prescott` kernels in this process (decided once).
fn prescott_kernels() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| core_is_affected(&corename()))
}

/// Whether calls into OpenBLAS on `T` must not run beside one another even while it runs
/// one thread: real types under the `Prescott` kernels (see `parallel::blas_call`).
/// Unlike the guard, this ignores `CTENSOR_OPENBLAS_GUARD`.
pub(crate) fn calls_alone<T: Scalar>() -> bool {
    matches!(T::DTYPE, DataType::Float | DataType::Double) && prescott_kernels()
}

/// Whether OpenBLAS's kernel family `core` has the real `?symv` over-read.
pub fn core_is_affected(core: &str) -> bool {
    core.eq_ignore_ascii_case("prescott")
}

/// Whether a host kernel on `T` must run on padded copies in this process: complex types
/// on builds with the `?gemv`/`?hemv` over-read, real ones under the `Prescott` kernels.
pub(crate) fn guard<T: Scalar>() -> bool {
    guard_for(T::DTYPE)
}

/// [`guard`] by data type.
fn guard_for(dtype: DataType) -> bool {
    match dtype {
        DataType::ComplexFloat | DataType::ComplexDouble => gemv_guard_enabled(),
        DataType::Float | DataType::Double => symv_guard_enabled(),
        _ => false,
    }
}

/// Elements of mapped memory that must follow each matrix operand of element type
/// `dtype` whose call's largest leading dimension is `ld` for [`with_mapped_tails`] to
/// be sound: one leading dimension and a margin where the guard is on for `dtype`, 0
/// where it is off.
pub fn operand_tail(dtype: DataType, ld: usize) -> usize {
    if guard_for(dtype) {
        tail(ld)
    } else {
        0
    }
}

thread_local! {
    /// Set by [`with_mapped_tails`]: the caller's operands already carry their tails.
    static TAILS_MAPPED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the guard's copies of the matrix operands skipped on this thread: the
/// host LAPACK kernels that `f` calls work on the caller's memory directly (their own
/// workspaces keep their tails). For callers that allocate their operands themselves,
/// with the tail, and so save the two copies of each operand that the guard would make
/// (in and back out). Without the guard it only runs `f`.
///
/// # Safety
/// Every matrix operand that a host LAPACK kernel receives inside `f` on this thread must
/// be followed by at least [`operand_tail`]`(dtype, ld)` elements of mapped memory that
/// may be read, where `ld` is the largest leading dimension of that call's operands.
pub unsafe fn with_mapped_tails<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the previous setting, also when `f` unwinds.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAILS_MAPPED.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(TAILS_MAPPED.with(|t| t.replace(true)));
    f()
}

/// Whether the operands must be copied into padded memory: the guard is on for `T` and
/// no [`with_mapped_tails`] caller has vouched for their tails.
fn copy_operands<T: Scalar>() -> bool {
    guard::<T>() && !TAILS_MAPPED.with(Cell::get)
}

/// Elements of mapped tail that keep the over-read of an array with leading dimension
/// (or `x` stride) `ld` inside memory we own.
pub(crate) fn tail(ld: usize) -> usize {
    ld.saturating_add(TAIL_MARGIN)
}

/// A host copy of `span` elements followed by `tail` zeroed elements.
pub(crate) struct Padded<T> {
    buf: Vec<T>,
    span: usize,
}

impl<T: Scalar> Padded<T> {
    /// A copy of `src` with `tail` extra elements after it.
    pub(crate) fn copy_of(src: &[T], tail: usize) -> Padded<T> {
        let mut buf = Vec::with_capacity(src.len().saturating_add(tail));
        buf.extend_from_slice(src);
        buf.resize(src.len().saturating_add(tail), T::zero());
        Padded {
            buf,
            span: src.len(),
        }
    }

    /// `span` zeroed elements with `tail` more after them.
    pub(crate) fn zeroed(span: usize, tail: usize) -> Padded<T> {
        Padded {
            buf: vec![T::zero(); span.saturating_add(tail)],
            span,
        }
    }

    /// The `span` elements (without the tail) for reading.
    pub(crate) fn as_slice(&self) -> &[T] {
        &self.buf[..self.span]
    }

    /// The `span` elements (without the tail), whose tail stays mapped behind them.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.buf[..self.span]
    }
}

/// Runs `f` on `a` itself, or, when the guard is on for `T` (and the caller has not
/// vouched for the tails, [`with_mapped_tails`]), on a padded copy of it (tail of one
/// leading dimension `ld`) that is written back afterwards.
pub(crate) fn on_padded<T: Scalar, R>(a: &mut [T], ld: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    if !copy_operands::<T>() || a.is_empty() {
        return f(a);
    }
    let mut p = Padded::copy_of(a, tail(ld));
    let r = f(p.as_mut_slice());
    a.copy_from_slice(p.as_slice());
    r
}

/// [`on_padded`] for the three matrices one LAPACK call writes (an SVD's `A`, `U`, `Vᴴ`;
/// a generalized eigensolver's `A`, `B`, `Z`), each with its leading dimension.
pub(crate) fn on_padded3<T: Scalar, R>(
    [(a, lda), (b, ldb), (c, ldc)]: [(&mut [T], usize); 3],
    f: impl FnOnce(&mut [T], &mut [T], &mut [T]) -> R,
) -> R {
    on_padded(a, lda, |a| {
        on_padded(b, ldb, |b| on_padded(c, ldc, |c| f(a, b, c)))
    })
}

/// Runs `f` on `a` itself, or, when the guard is on for `T`, on a padded copy of it (tail
/// of one leading dimension `ld`); for matrices LAPACK only reads.
pub(crate) fn on_padded_read<T: Scalar, R>(a: &[T], ld: usize, f: impl FnOnce(&[T]) -> R) -> R {
    if !copy_operands::<T>() || a.is_empty() {
        return f(a);
    }
    f(Padded::copy_of(a, tail(ld)).as_slice())
}

/// Workspace elements a host kernel allocates past what LAPACK asks for, so a stray read
/// of the kernels stays in memory ctensor owns (the margin of [`tail`]).
pub(crate) const WORK_MARGIN: usize = TAIL_MARGIN;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_tails_are_vouched_for_only_inside_the_call_and_only_on_its_thread() {
        use ctensor_base::c64;
        let before = copy_operands::<c64>();
        assert_eq!(before, guard::<c64>());
        // SAFETY: no kernel runs inside.
        let (inside, other_thread) = unsafe {
            with_mapped_tails(|| {
                (
                    copy_operands::<c64>(),
                    std::thread::spawn(copy_operands::<c64>).join().unwrap(),
                )
            })
        };
        assert!(!inside);
        assert_eq!(other_thread, before);
        // Nested calls and a panic inside restore the setting on the way out.
        let r = std::panic::catch_unwind(|| {
            // SAFETY: as above.
            unsafe { with_mapped_tails(|| with_mapped_tails(|| panic!("inside"))) }
        });
        assert!(r.is_err());
        assert_eq!(copy_operands::<c64>(), before);
        assert_eq!(operand_tail(DataType::Int, 100), 0);
        let expect = if guard::<c64>() { 100 + TAIL_MARGIN } else { 0 };
        assert_eq!(operand_tail(DataType::ComplexDouble, 100), expect);
    }

    #[test]
    fn versions_parse_from_configuration_strings() {
        let c = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64";
        assert_eq!(parse_version(c), Some((0, 3, 21)));
        assert_eq!(
            parse_version("OpenBLAS 0.3.26.dev DYNAMIC_ARCH"),
            Some((0, 3, 26))
        );
        assert_eq!(parse_version("OpenBLAS 0.3 Haswell"), Some((0, 3, 0)));
        assert_eq!(parse_version("something else"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn releases_before_0_3_24_on_x86_64_are_affected() {
        for (v, affected) in [
            ((0, 3, 20), true),
            ((0, 3, 21), true),
            ((0, 3, 23), true),
            ((0, 3, 24), false),
            ((0, 3, 30), false),
            ((0, 4, 0), false),
        ] {
            assert_eq!(version_is_affected(v, true), affected, "{v:?}");
            assert!(!version_is_affected(v, false), "{v:?} off x86-64");
        }
    }

    #[test]
    fn only_the_prescott_kernels_have_the_symv_over_read() {
        assert!(core_is_affected("Prescott"));
        assert!(core_is_affected("PRESCOTT"));
        for core in [
            "Haswell",
            "SkylakeX",
            "Cooperlake",
            "Zen",
            "Sandybridge",
            "",
        ] {
            assert!(!core_is_affected(core), "{core}");
        }
    }

    #[test]
    fn the_linked_library_reports_a_version() {
        let c = config();
        assert!(
            parse_version(&c).is_some(),
            "unparsable OpenBLAS config {c:?}"
        );
        assert!(!corename().is_empty());
    }

    #[test]
    fn padded_runs_write_back_and_leave_a_tail() {
        let on = guard::<ctensor_base::c32>();
        let one = ctensor_base::c32::new(1.0, 0.0);
        let mut a = vec![one, one * 2.0, one * 3.0];
        let seen_tail = on_padded(&mut a, 5, |p| {
            p[0] = one * 7.0;
            if !on {
                return None;
            }
            // SAFETY: with the guard on, `Padded` allocated `tail(5)` zeroed elements
            // right after the span.
            Some(unsafe { *p.as_ptr().add(p.len() + tail(5) - 1) })
        });
        assert_eq!(a, [one * 7.0, one * 2.0, one * 3.0]);
        assert_eq!(seen_tail, on.then_some(one * 0.0));
        // The read-only form sees the same values, and the same tail when on.
        let seen = on_padded_read(&a, 5, |p| {
            // SAFETY: as above.
            (
                p.to_vec(),
                on.then(|| unsafe { *p.as_ptr().add(p.len() + tail(5) - 1) }),
            )
        });
        assert_eq!(seen, (a.clone(), on.then_some(one * 0.0)));
    }
}
