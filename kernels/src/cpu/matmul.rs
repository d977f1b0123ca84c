//! `MatMul` on the host: BLAS `gemm` for the BLAS types, a plain loop for the others.

use ctensor_base::{CpuDevice, Result, Scalar};

use crate::blas::matmul::MatMul;
use crate::elementwise::arith::Arith;
use crate::parallel::{for_each_range, SendPtr};

/// Element `(r, c)` of `op(X)` for column-major `x` with leading dimension `ld`.
///
/// # Safety
/// The element lies inside `x`'s allocation.
#[inline(always)]
unsafe fn op_at<T: Scalar>(
    x: SendPtr<T>,
    t: crate::blas::Trans,
    ld: usize,
    r: usize,
    c: usize,
) -> T {
    use crate::blas::Trans;
    // SAFETY: the caller's promise.
    let v = unsafe {
        match t {
            Trans::N => x.get().add(r + c * ld).read(),
            Trans::T | Trans::C => x.get().add(c + r * ld).read(),
        }
    };
    if t == Trans::C {
        v.conj()
    } else {
        v
    }
}

impl<T: Arith> MatMul<T> for CpuDevice {
    unsafe fn matmul(
        transa: crate::blas::Trans,
        transb: crate::blas::Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Result<()> {
        crate::blas::matmul::matmul_via_gemm!(
            CpuDevice, T, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc
        );
        let op = "matmul";
        let p = super::blas::plan_gemm::<T>(op, transa, transb, m, n, k, lda, ldb, ldc)?;
        crate::blas::args::operands(
            op,
            [
                ("a", a, p.spans[0]),
                ("b", b, p.spans[1]),
                ("c", c as *const T, p.spans[2]),
            ],
        )?;
        let (a, b) = (SendPtr(a as *mut T), SendPtr(b as *mut T));
        let at = move |i: usize, l: usize| {
            // SAFETY: `i < m`, `l < k`: inside the span of `a` checked above.
            unsafe { op_at(a, transa, lda, i, l) }
        };
        let bt = move |l: usize, j: usize| {
            // SAFETY: `l < k`, `j < n`: inside the span of `b` checked above.
            unsafe { op_at(b, transb, ldb, l, j) }
        };
        let (al, be) = (alpha.up(), beta.up());
        let beta_zero = beta == T::zero();
        let s = SendPtr(c);
        for_each_range(n, m * k, |cols| {
            let mut acc = vec![T::zero().up(); m];
            for j in cols {
                acc.iter_mut().for_each(|v| *v = T::zero().up());
                for l in 0..k {
                    let blj = bt(l, j).up();
                    for (i, v) in acc.iter_mut().enumerate() {
                        *v = T::add(*v, T::mul(at(i, l).up(), blj));
                    }
                }
                for (i, v) in acc.iter().enumerate() {
                    // SAFETY: `i < m`, `j < n` inside C; each column belongs to one thread.
                    unsafe {
                        let cij = s.get().add(i + j * ldc);
                        let old = if beta_zero {
                            T::zero().up()
                        } else {
                            T::mul(be, cij.read().up())
                        };
                        cij.write(T::down(T::add(T::mul(al, *v), old)));
                    }
                }
            }
        });
        Ok(())
    }
}
