//! Raw kernels on caller-owned pointers, so C and Fortran codes can use ctensor's BLAS
//! and LAPACK layer on their own arrays: typed (`ct_dgemm`, `ct_zgemm`, `ct_dsyevd`,
//! `ct_zheevd`) and dtype-dispatched (`ct_gemm`, `ct_heevd`). Column-major, reference
//! BLAS conventions; `trans`, `jobz` and `uplo` are characters ('N'/'T'/'C', 'N'/'V',
//! 'U'/'L'). Complex scalars are passed by pointer to two doubles (`ct_c64`, the layout
//! of C's `double _Complex`, C++'s `std::complex<double>` and Fortran's `complex(8)`).

use std::ffi::{c_char, c_void};

use ctensor_aten::{c64, CpuDevice, DeviceType, Scalar};
use ctensor_kernels::blas::{BlasGemm, Trans};
use ctensor_kernels::lapack::{Jobz, LapackHeevd, Uplo};

use super::status::{ct_status, guard, non_null, Fail};
use super::tensor::{device_of, dtype_of};

/// A double-precision complex number, laid out as `{re, im}`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ct_c64 {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

fn trans_of(c: c_char) -> Result<Trans, Fail> {
    Ok(Trans::from_char(c as u8 as char)?)
}

fn jobz_of(c: c_char) -> Result<Jobz, Fail> {
    Ok(Jobz::from_char(c as u8 as char)?)
}

fn uplo_of(c: c_char) -> Result<Uplo, Fail> {
    Ok(Uplo::from_char(c as u8 as char)?)
}

/// For `CT_GPU`, checks that each non-null pointer is memory the CUDA driver knows, so a
/// host array passed as device memory is `CT_ERR_INVALID_ARGUMENT`, not a fault inside
/// cuBLAS/cuSOLVER. Nothing to check for `CT_CPU`.
#[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
fn check_device_pointers(device: DeviceType, ptrs: &[(*const c_void, &str)]) -> Result<(), Fail> {
    #[cfg(feature = "cuda")]
    if device == DeviceType::Gpu {
        for &(p, name) in ptrs {
            if !p.is_null() && !ctensor_base::gpu::is_cuda_pointer(p as u64)? {
                return Err(Fail::Arg(format!(
                    "`{name}` = {p:p} is not GPU memory the CUDA driver knows (a host \
                     pointer passed with CT_GPU?)"
                )));
            }
        }
    }
    Ok(())
}

/// `C := alpha · op(A) · op(B) + beta · C` in double precision (`dgemm`).
///
/// # Safety
/// As reference BLAS `dgemm`: `a`, `b`, `c` valid for their column-major extents.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ct_dgemm(
    transa: c_char,
    transb: c_char,
    m: usize,
    n: usize,
    k: usize,
    alpha: f64,
    a: *const f64,
    lda: usize,
    b: *const f64,
    ldb: usize,
    beta: f64,
    c: *mut f64,
    ldc: usize,
) -> ct_status {
    guard("ct_dgemm", || {
        let (ta, tb) = (trans_of(transa)?, trans_of(transb)?);
        // SAFETY: the caller's promise; sizes and pointers are checked by the kernel.
        unsafe {
            <CpuDevice as BlasGemm<f64>>::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
        }?;
        Ok(())
    })
}

/// `C := alpha · op(A) · op(B) + beta · C` in double complex (`zgemm`); `alpha` and
/// `beta` point to complex scalars.
///
/// # Safety
/// As reference BLAS `zgemm`; `alpha` and `beta` valid for reads.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ct_zgemm(
    transa: c_char,
    transb: c_char,
    m: usize,
    n: usize,
    k: usize,
    alpha: *const ct_c64,
    a: *const ct_c64,
    lda: usize,
    b: *const ct_c64,
    ldb: usize,
    beta: *const ct_c64,
    c: *mut ct_c64,
    ldc: usize,
) -> ct_status {
    guard("ct_zgemm", || {
        let (ta, tb) = (trans_of(transa)?, trans_of(transb)?);
        // SAFETY: the caller's promise on the scalar pointers.
        let (al, be) = unsafe { (non_null(alpha, "alpha")?, non_null(beta, "beta")?) };
        let (al, be) = (c64::new(al.re, al.im), c64::new(be.re, be.im));
        // SAFETY: `ct_c64` and `c64` are both two f64s, `{re, im}`; the caller's promise
        // on the arrays; sizes and pointers are checked by the kernel.
        unsafe {
            <CpuDevice as BlasGemm<c64>>::gemm(
                ta,
                tb,
                m,
                n,
                k,
                al,
                a as *const c64,
                lda,
                b as *const c64,
                ldb,
                be,
                c as *mut c64,
                ldc,
            )
        }?;
        Ok(())
    })
}

/// All eigenvalues (`w`, ascending) and, with `jobz` 'V', eigenvectors (over `a`) of a
/// real symmetric matrix (`dsyevd`).
///
/// # Safety
/// `a` valid for `lda·n` doubles, `w` for `n`.
#[no_mangle]
pub unsafe extern "C" fn ct_dsyevd(
    jobz: c_char,
    uplo: c_char,
    n: usize,
    a: *mut f64,
    lda: usize,
    w: *mut f64,
) -> ct_status {
    guard("ct_dsyevd", || {
        let (j, u) = (jobz_of(jobz)?, uplo_of(uplo)?);
        // SAFETY: the caller's promise; checked by the kernel.
        unsafe { <CpuDevice as LapackHeevd<f64>>::heevd(j, u, n, a, lda, w) }?;
        Ok(())
    })
}

/// All eigenvalues (`w`, ascending) and, with `jobz` 'V', eigenvectors (over `a`) of a
/// complex Hermitian matrix (`zheevd`).
///
/// # Safety
/// `a` valid for `lda·n` complex numbers, `w` for `n` doubles.
#[no_mangle]
pub unsafe extern "C" fn ct_zheevd(
    jobz: c_char,
    uplo: c_char,
    n: usize,
    a: *mut ct_c64,
    lda: usize,
    w: *mut f64,
) -> ct_status {
    guard("ct_zheevd", || {
        let (j, u) = (jobz_of(jobz)?, uplo_of(uplo)?);
        // SAFETY: `ct_c64` is `c64`'s layout; the caller's promise; checked by the kernel.
        unsafe { <CpuDevice as LapackHeevd<c64>>::heevd(j, u, n, a as *mut c64, lda, w) }?;
        Ok(())
    })
}

/// `gemm` for the element type `dtype` (f32, f64, c32, c64) on `device` (`a`, `b`, `c`
/// are device pointers for `CT_GPU`, queued on ctensor's stream); the scalars `alpha`
/// and `beta` point to host values of that type.
///
/// # Safety
/// As reference BLAS `?gemm` for that type; `alpha`, `beta` valid for reads.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ct_gemm(
    dtype: i32,
    device: i32,
    transa: c_char,
    transb: c_char,
    m: usize,
    n: usize,
    k: usize,
    alpha: *const c_void,
    a: *const c_void,
    lda: usize,
    b: *const c_void,
    ldb: usize,
    beta: *const c_void,
    c: *mut c_void,
    ldc: usize,
) -> ct_status {
    guard("ct_gemm", || {
        let (ta, tb) = (trans_of(transa)?, trans_of(transb)?);
        let ptrs = [(a, "a"), (b, "b"), (c as *const c_void, "c")];
        check_device_pointers(device_of(device)?, &ptrs)?;
        // The one dtype × device dispatch of aten, as every op uses it.
        ctensor_aten::dispatch_blas!(dtype_of(dtype)?, device_of(device)?, "ct_gemm", T, D => {
            // SAFETY: the caller's promise that the scalars have type `T`.
            let (al, be) = unsafe {
                (
                    *non_null(alpha as *const T, "alpha")?,
                    *non_null(beta as *const T, "beta")?,
                )
            };
            // SAFETY: the caller's promise on the arrays; checked by the kernel.
            unsafe {
                <D as BlasGemm<T>>::gemm(
                    ta, tb, m, n, k, al, a as *const T, lda, b as *const T, ldb, be,
                    c as *mut T, ldc,
                )
            }
            .map_err(Fail::Err)
        })
    })
}

/// `heevd` for the element type `dtype` (f32/f64: `syevd`; c32/c64: `heevd`) on
/// `device` (`a` and `w` are device pointers for `CT_GPU`; cuSOLVER); `w` receives `n`
/// values of the real type.
///
/// # Safety
/// `a` valid for `lda·n` elements of `dtype`, `w` for `n` reals.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ct_heevd(
    dtype: i32,
    device: i32,
    jobz: c_char,
    uplo: c_char,
    n: usize,
    a: *mut c_void,
    lda: usize,
    w: *mut c_void,
) -> ct_status {
    guard("ct_heevd", || {
        let (j, u) = (jobz_of(jobz)?, uplo_of(uplo)?);
        let ptrs = [(a as *const c_void, "a"), (w as *const c_void, "w")];
        check_device_pointers(device_of(device)?, &ptrs)?;
        ctensor_aten::dispatch_blas!(dtype_of(dtype)?, device_of(device)?, "ct_heevd", T, D => {
            // SAFETY: the caller's promise on the arrays; checked by the kernel.
            unsafe {
                <D as LapackHeevd<T>>::heevd(j, u, n, a as *mut T, lda, w as *mut <T as Scalar>::Real)
            }
            .map_err(Fail::Err)
        })
    })
}
