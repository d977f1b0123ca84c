//! faer's self-adjoint eigensolver as a host kernel ([`HeevFaer`]), with LAPACK's
//! calling convention: column-major, one triangle read, results in `w` and `z`.

use ctensor_base::{c64, CastFrom, CpuDevice, Error, Result, Scalar};

use super::{slice, slice_mut};
use crate::lapack::args::plan_square;
use crate::lapack::{HeevFaer, Jobz, Uplo};
use crate::parallel;

impl<T> HeevFaer<T> for CpuDevice
where
    T: Scalar + faer::traits::ComplexField,
{
    unsafe fn heev_faer(
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *const T,
        lda: usize,
        w: *mut <T as Scalar>::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<()> {
        const OP: &str = "heev_faer";
        let Some(pa) = plan_square(OP, "a", n, a, lda)? else {
            return Ok(());
        };
        crate::args::non_null(OP, "w", w, n)?;
        // SAFETY: `a` checked above; the caller vouches for the memory.
        unsafe {
            crate::lapack::require_finite::<T, CpuDevice>(
                OP,
                "a",
                crate::lapack::Part::Triangle(uplo),
                n,
                n,
                a,
                lda,
            )
        }?;
        let vectors = jobz == Jobz::Vectors;
        let zspan = if vectors {
            plan_square(OP, "z", n, z, ldz)?.map_or(0, |p| p.span)
        } else {
            0
        };
        // SAFETY: the caller vouches for `a` over the span checked above.
        let a = unsafe { slice(a, pa.span) };
        // The full Hermitian matrix from the one triangle we may read, so what faer
        // reads (it takes the lower half) never depends on the other triangle.
        let mut h = vec![T::zero(); n * n];
        for j in 0..n {
            h[j + j * n] = T::cast_from(c64::new(a[j + j * lda].to_c64().re, 0.0));
            for i in j + 1..n {
                let lower = match uplo {
                    Uplo::Lower => a[i + j * lda],
                    Uplo::Upper => a[j + i * lda].conj(),
                };
                h[i + j * n] = lower;
                h[j + i * n] = lower.conj();
            }
        }
        let mut s = vec![T::zero(); n];
        let mut u = if vectors {
            vec![T::zero(); n * n]
        } else {
            Vec::new()
        };
        let threads = parallel::num_threads();
        let par = if threads > 1 {
            faer::Par::rayon(threads)
        } else {
            faer::Par::Seq
        };
        let compute = if vectors {
            faer::linalg::evd::ComputeEigenvectors::Yes
        } else {
            faer::linalg::evd::ComputeEigenvectors::No
        };
        let (u_ref, s_ref, h_ref) = (&mut u, &mut s, &h);
        let mut run = move || {
            use faer::dyn_stack::{MemBuffer, MemStack};
            use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch};
            let mut mem = MemBuffer::new(self_adjoint_evd_scratch::<T>(
                n,
                compute,
                par,
                Default::default(),
            ));
            let um = vectors.then(|| faer::MatMut::from_column_major_slice_mut(u_ref, n, n));
            self_adjoint_evd(
                faer::MatRef::from_column_major_slice(h_ref, n, n),
                faer::diag::DiagMut::from_slice_mut(s_ref),
                um,
                par,
                MemStack::new(&mut mem),
                Default::default(),
            )
        };
        // faer's rayon parallelism runs inside ctensor's pool; faer's global
        // parallelism setting is neither read by its eigensolver nor changed here.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            if threads > 1 {
                parallel::install(run)
            } else {
                run()
            }
        }));
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(Error::Lapack {
                    routine: "faer::self_adjoint_evd",
                    info: 1,
                    detail: format!("the eigendecomposition did not converge ({e:?})"),
                })
            }
            Err(_) => {
                return Err(Error::Internal {
                    op: OP,
                    what: "faer's eigensolver panicked".into(),
                })
            }
        }
        // SAFETY: the caller vouches for `w` (n values) and, with vectors, `z` (span).
        let w = unsafe { slice_mut(w, n) };
        for (wi, si) in w.iter_mut().zip(&s) {
            *wi = <<T as Scalar>::Real as CastFrom<c64>>::cast_from(si.to_c64());
        }
        if vectors {
            // SAFETY: as above.
            let z = unsafe { slice_mut(z, zspan) };
            for j in 0..n {
                z[j * ldz..j * ldz + n].copy_from_slice(&u[j * n..(j + 1) * n]);
            }
        }
        Ok(())
    }
}
