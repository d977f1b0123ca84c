//! The ScaLAPACK and BLACS entry points ctensor calls, as Debian's
//! `libscalapack-openmpi` exports them: BLACS's C interface, and the Fortran routines
//! with every argument by reference and, after the last one, one hidden length per
//! character argument (gfortran's convention since version 8: `size_t`).
//!
//! [`Pheev`] puts the eight eigensolvers (`p{s,d}syev{d,r}`, `p{c,z}heev{d,r}`) behind
//! one generic signature.

use std::ffi::{c_char, c_int};

use ctensor_base::{c32, c64, Scalar};
use mpi::ffi::MPI_Comm;

/// A ScaLAPACK array descriptor (`DLEN_ = 9` integers).
pub(crate) type Desc = [c_int; 9];

#[allow(missing_docs)]
extern "C" {
    pub(crate) fn Csys2blacs_handle(comm: MPI_Comm) -> c_int;
    pub(crate) fn Cfree_blacs_system_handle(handle: c_int);
    pub(crate) fn Cblacs_gridinit(
        ctxt: *mut c_int,
        order: *const c_char,
        nprow: c_int,
        npcol: c_int,
    );
    pub(crate) fn Cblacs_gridinfo(
        ctxt: c_int,
        nprow: *mut c_int,
        npcol: *mut c_int,
        myrow: *mut c_int,
        mycol: *mut c_int,
    );
    pub(crate) fn Cblacs_gridexit(ctxt: c_int);

    pub(crate) fn numroc_(
        n: &c_int,
        nb: &c_int,
        iproc: &c_int,
        isrcproc: &c_int,
        nprocs: &c_int,
    ) -> c_int;
    pub(crate) fn indxl2g_(
        indxloc: &c_int,
        nb: &c_int,
        iproc: &c_int,
        isrcproc: &c_int,
        nprocs: &c_int,
    ) -> c_int;
    pub(crate) fn descinit_(
        desc: *mut c_int,
        m: &c_int,
        n: &c_int,
        mb: &c_int,
        nb: &c_int,
        irsrc: &c_int,
        icsrc: &c_int,
        ictxt: &c_int,
        lld: &c_int,
        info: &mut c_int,
    );
}

macro_rules! declare_real {
    ($t:ty, $evd:ident, $evr:ident) => {
        extern "C" {
            fn $evd(
                jobz: *const c_char,
                uplo: *const c_char,
                n: &c_int,
                a: *mut $t,
                ia: &c_int,
                ja: &c_int,
                desca: *const c_int,
                w: *mut $t,
                z: *mut $t,
                iz: &c_int,
                jz: &c_int,
                descz: *const c_int,
                work: *mut $t,
                lwork: &c_int,
                iwork: *mut c_int,
                liwork: &c_int,
                info: &mut c_int,
                l1: usize,
                l2: usize,
            );
            fn $evr(
                jobz: *const c_char,
                range: *const c_char,
                uplo: *const c_char,
                n: &c_int,
                a: *mut $t,
                ia: &c_int,
                ja: &c_int,
                desca: *const c_int,
                vl: &$t,
                vu: &$t,
                il: &c_int,
                iu: &c_int,
                m: &mut c_int,
                nz: &mut c_int,
                w: *mut $t,
                z: *mut $t,
                iz: &c_int,
                jz: &c_int,
                descz: *const c_int,
                work: *mut $t,
                lwork: &c_int,
                iwork: *mut c_int,
                liwork: &c_int,
                info: &mut c_int,
                l1: usize,
                l2: usize,
                l3: usize,
            );
        }
    };
}

macro_rules! declare_complex {
    ($t:ty, $r:ty, $evd:ident, $evr:ident) => {
        extern "C" {
            fn $evd(
                jobz: *const c_char,
                uplo: *const c_char,
                n: &c_int,
                a: *mut $t,
                ia: &c_int,
                ja: &c_int,
                desca: *const c_int,
                w: *mut $r,
                z: *mut $t,
                iz: &c_int,
                jz: &c_int,
                descz: *const c_int,
                work: *mut $t,
                lwork: &c_int,
                rwork: *mut $r,
                lrwork: &c_int,
                iwork: *mut c_int,
                liwork: &c_int,
                info: &mut c_int,
                l1: usize,
                l2: usize,
            );
            fn $evr(
                jobz: *const c_char,
                range: *const c_char,
                uplo: *const c_char,
                n: &c_int,
                a: *mut $t,
                ia: &c_int,
                ja: &c_int,
                desca: *const c_int,
                vl: &$r,
                vu: &$r,
                il: &c_int,
                iu: &c_int,
                m: &mut c_int,
                nz: &mut c_int,
                w: *mut $r,
                z: *mut $t,
                iz: &c_int,
                jz: &c_int,
                descz: *const c_int,
                work: *mut $t,
                lwork: &c_int,
                rwork: *mut $r,
                lrwork: &c_int,
                iwork: *mut c_int,
                liwork: &c_int,
                info: &mut c_int,
                l1: usize,
                l2: usize,
                l3: usize,
            );
        }
    };
}

declare_real!(f32, pssyevd_, pssyevr_);
declare_real!(f64, pdsyevd_, pdsyevr_);
declare_complex!(c32, f32, pcheevd_, pcheevr_);
declare_complex!(c64, f64, pzheevd_, pzheevr_);

/// The arrays one eigensolver call works on (all local parts of distributed arrays, or
/// workspaces); `rwork` is used by the complex routines only.
pub(crate) struct EigArgs<T: Scalar> {
    pub n: c_int,
    pub a: *mut T,
    pub desca: Desc,
    pub w: *mut T::Real,
    pub z: *mut T,
    pub descz: Desc,
    pub work: *mut T,
    pub lwork: c_int,
    pub rwork: *mut T::Real,
    pub lrwork: c_int,
    pub iwork: *mut c_int,
    pub liwork: c_int,
}

/// Which eigenpairs `p?syevr`/`p?heevr` compute: `'A'` all, `'I'` with 1-based
/// `il..=iu`, or `'V'` with `(vl, vu]`; `jobz` `'V'` with eigenvectors, `'N'` without.
#[derive(Clone, Copy)]
pub(crate) struct EvrRange<R> {
    pub jobz: u8,
    pub range: u8,
    pub vl: R,
    pub vu: R,
    pub il: c_int,
    pub iu: c_int,
}

/// ScaLAPACK's dense Hermitian eigensolvers for one element type.
pub(crate) trait Pheev: Scalar {
    /// The divide-and-conquer routine's name.
    const EVD: &'static str;
    /// The MRRR routine's name.
    const EVR: &'static str;

    /// `x` in the real type (an eigenvalue bound).
    fn real(x: f64) -> Self::Real;

    /// `p?syevd`/`p?heevd` with `jobz = 'V'`, `uplo = 'L'`; returns `info`.
    ///
    /// # Safety
    /// Every pointer is valid for the local extent its descriptor or length gives (or is
    /// a workspace query: lengths −1 and at least one element behind each workspace).
    unsafe fn evd(args: &EigArgs<Self>) -> c_int;

    /// `p?syevr`/`p?heevr` with `uplo = 'L'`; returns `info` and sets the
    /// number of eigenvalues found in `m`.
    ///
    /// # Safety
    /// As [`evd`](Self::evd).
    unsafe fn evr(args: &EigArgs<Self>, range: EvrRange<Self::Real>, m: &mut c_int) -> c_int;
}

const ONE: c_int = 1;
const V: *const c_char = c"V".as_ptr();
const L: *const c_char = c"L".as_ptr();

macro_rules! impl_real {
    ($t:ty, $evd:ident, $evr:ident) => {
        impl Pheev for $t {
            const EVD: &'static str = stringify!($evd);
            const EVR: &'static str = stringify!($evr);
            fn real(x: f64) -> $t {
                x as $t
            }
            unsafe fn evd(x: &EigArgs<Self>) -> c_int {
                let mut info = 0;
                // SAFETY: the caller's contract; the character arguments are one byte.
                unsafe {
                    $evd(
                        V,
                        L,
                        &x.n,
                        x.a,
                        &ONE,
                        &ONE,
                        x.desca.as_ptr(),
                        x.w,
                        x.z,
                        &ONE,
                        &ONE,
                        x.descz.as_ptr(),
                        x.work,
                        &x.lwork,
                        x.iwork,
                        &x.liwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn evr(x: &EigArgs<Self>, r: EvrRange<Self::Real>, m: &mut c_int) -> c_int {
                let (mut info, mut nz) = (0, 0);
                let (range, jobz) = ([r.range as c_char, 0], [r.jobz as c_char, 0]);
                // SAFETY: the caller's contract; the character arguments are one byte.
                unsafe {
                    $evr(
                        jobz.as_ptr(),
                        range.as_ptr(),
                        L,
                        &x.n,
                        x.a,
                        &ONE,
                        &ONE,
                        x.desca.as_ptr(),
                        &r.vl,
                        &r.vu,
                        &r.il,
                        &r.iu,
                        m,
                        &mut nz,
                        x.w,
                        x.z,
                        &ONE,
                        &ONE,
                        x.descz.as_ptr(),
                        x.work,
                        &x.lwork,
                        x.iwork,
                        &x.liwork,
                        &mut info,
                        1,
                        1,
                        1,
                    )
                };
                info
            }
        }
    };
}

macro_rules! impl_complex {
    ($t:ty, $r:ty, $evd:ident, $evr:ident) => {
        impl Pheev for $t {
            const EVD: &'static str = stringify!($evd);
            const EVR: &'static str = stringify!($evr);
            fn real(x: f64) -> $r {
                x as $r
            }
            unsafe fn evd(x: &EigArgs<Self>) -> c_int {
                let mut info = 0;
                // SAFETY: the caller's contract; the character arguments are one byte.
                unsafe {
                    $evd(
                        V,
                        L,
                        &x.n,
                        x.a,
                        &ONE,
                        &ONE,
                        x.desca.as_ptr(),
                        x.w,
                        x.z,
                        &ONE,
                        &ONE,
                        x.descz.as_ptr(),
                        x.work,
                        &x.lwork,
                        x.rwork,
                        &x.lrwork,
                        x.iwork,
                        &x.liwork,
                        &mut info,
                        1,
                        1,
                    )
                };
                info
            }
            unsafe fn evr(x: &EigArgs<Self>, r: EvrRange<Self::Real>, m: &mut c_int) -> c_int {
                let (mut info, mut nz) = (0, 0);
                let (range, jobz) = ([r.range as c_char, 0], [r.jobz as c_char, 0]);
                // SAFETY: the caller's contract; the character arguments are one byte.
                unsafe {
                    $evr(
                        jobz.as_ptr(),
                        range.as_ptr(),
                        L,
                        &x.n,
                        x.a,
                        &ONE,
                        &ONE,
                        x.desca.as_ptr(),
                        &r.vl,
                        &r.vu,
                        &r.il,
                        &r.iu,
                        m,
                        &mut nz,
                        x.w,
                        x.z,
                        &ONE,
                        &ONE,
                        x.descz.as_ptr(),
                        x.work,
                        &x.lwork,
                        x.rwork,
                        &x.lrwork,
                        x.iwork,
                        &x.liwork,
                        &mut info,
                        1,
                        1,
                        1,
                    )
                };
                info
            }
        }
    };
}

impl_real!(f32, pssyevd_, pssyevr_);
impl_real!(f64, pdsyevd_, pdsyevr_);
impl_complex!(c32, f32, pcheevd_, pcheevr_);
impl_complex!(c64, f64, pzheevd_, pzheevr_);

/// An ELPA object handle (`elpa_t`).
pub(crate) type ElpaHandle = *mut std::ffi::c_void;

extern "C" {
    pub(crate) fn elpa_init(api_version: c_int) -> c_int;
    pub(crate) fn elpa_allocate(error: *mut c_int) -> ElpaHandle;
    pub(crate) fn elpa_set_integer(
        h: ElpaHandle,
        name: *const c_char,
        value: c_int,
        error: *mut c_int,
    );
    pub(crate) fn elpa_setup(h: ElpaHandle) -> c_int;
    pub(crate) fn elpa_deallocate(h: ElpaHandle, error: *mut c_int);
    pub(crate) fn elpa_strerr(error: c_int) -> *const c_char;
}

/// The API version ctensor is written against (`ELPA_API_VERSION` of ELPA 2022.11).
pub(crate) const ELPA_API_VERSION: c_int = 20221109;

/// PBLAS's distributed conjugate transpose and ELPA's solvers for one element type.
pub(crate) trait Elpa: Pheev {
    /// `c := aᴴ` (`p?tranc`; `p?tran` for real types) for whole `n × n` matrices.
    ///
    /// # Safety
    /// `a` and `c` are the local parts their descriptors describe, on the same grid.
    unsafe fn tranc(n: c_int, a: *const Self, desca: &Desc, c: *mut Self, descc: &Desc);
    /// `elpa_eigenvectors` on host arrays; returns the ELPA error code.
    ///
    /// # Safety
    /// `h` is set up for this matrix; `a` and `q` are local parts, `w` has `na` entries.
    unsafe fn vectors(h: ElpaHandle, a: *mut Self, w: *mut Self::Real, q: *mut Self) -> c_int;
    /// `elpa_eigenvalues` on host arrays; returns the ELPA error code.
    ///
    /// # Safety
    /// As [`vectors`](Self::vectors).
    unsafe fn values(h: ElpaHandle, a: *mut Self, w: *mut Self::Real) -> c_int;
    /// The value with its imaginary part dropped (itself for real types).
    fn re_only(self) -> Self;
}

macro_rules! impl_elpa {
    ($t:ty, $r:ty, $tran:ident, $vec:ident, $val:ident, |$x:ident| $re:expr) => {
        extern "C" {
            fn $tran(
                m: &c_int,
                n: &c_int,
                alpha: &$t,
                a: *const $t,
                ia: &c_int,
                ja: &c_int,
                desca: *const c_int,
                beta: &$t,
                c: *mut $t,
                ic: &c_int,
                jc: &c_int,
                descc: *const c_int,
            );
            fn $vec(h: ElpaHandle, a: *mut $t, ev: *mut $r, q: *mut $t, error: *mut c_int);
            fn $val(h: ElpaHandle, a: *mut $t, ev: *mut $r, error: *mut c_int);
        }
        impl Elpa for $t {
            fn re_only(self) -> Self {
                let $x = self;
                $re
            }
            unsafe fn tranc(n: c_int, a: *const Self, desca: &Desc, c: *mut Self, descc: &Desc) {
                let (one, zero) = (<$t as Scalar>::one(), <$t as Scalar>::zero());
                // SAFETY: the caller's contract.
                unsafe {
                    $tran(
                        &n,
                        &n,
                        &one,
                        a,
                        &ONE,
                        &ONE,
                        desca.as_ptr(),
                        &zero,
                        c,
                        &ONE,
                        &ONE,
                        descc.as_ptr(),
                    )
                }
            }
            unsafe fn vectors(h: ElpaHandle, a: *mut Self, w: *mut $r, q: *mut Self) -> c_int {
                let mut err = 0;
                // SAFETY: the caller's contract.
                unsafe { $vec(h, a, w, q, &mut err) };
                err
            }
            unsafe fn values(h: ElpaHandle, a: *mut Self, w: *mut $r) -> c_int {
                let mut err = 0;
                // SAFETY: the caller's contract.
                unsafe { $val(h, a, w, &mut err) };
                err
            }
        }
    };
}

impl_elpa!(
    f32,
    f32,
    pstran_,
    elpa_eigenvectors_a_h_a_f,
    elpa_eigenvalues_a_h_a_f,
    |x| x
);
impl_elpa!(
    f64,
    f64,
    pdtran_,
    elpa_eigenvectors_a_h_a_d,
    elpa_eigenvalues_a_h_a_d,
    |x| x
);
impl_elpa!(
    c32,
    f32,
    pctranc_,
    elpa_eigenvectors_a_h_a_fc,
    elpa_eigenvalues_a_h_a_fc,
    |x| c32::new(x.re, 0.0)
);
impl_elpa!(
    c64,
    f64,
    pztranc_,
    elpa_eigenvectors_a_h_a_dc,
    elpa_eigenvalues_a_h_a_dc,
    |x| c64::new(x.re, 0.0)
);
