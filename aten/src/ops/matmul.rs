//! Matrix products: [`matmul`] (`a · b`), [`matmul_op`] with BLAS-style operation flags
//! on either side (`ψᴴ · Hψ` without an einsum string), and [`matmul_into`] with `alpha`,
//! `beta` and an existing output, so a solver's loop allocates nothing.
//!
//! A product of two matrices of one data type whose layouts BLAS reads as they lie is
//! one gemm call on a direct path: no einsum plan, no intermediate views, and a fresh
//! result that the gemm writes without a zero fill first. Everything else (batches,
//! broadcasting, mixed types, layouts that need a copy) is one einsum contraction
//! (`...ij,...jk->...ik`) over views: a transposed operand is a transposed view and a
//! conjugated one the einsum's `conj` flag, which BLAS reads through its `trans`
//! characters without a copy wherever the layout allows. Batch axes broadcast; mixed
//! data types promote.

use ctensor_base::{c64, CastFrom, Error, Result};
use ctensor_kernels::blas::MatMul;
use ctensor_kernels::blas::Trans;

use super::einsum::{blas_view, einsum, einsum_into, EinsumOptions};
use crate::core::dispatch::dispatch;
use crate::core::tensor::Tensor;

/// One matrix operand of a product as gemm sees it: `op(t)` is `rows × cols`, its
/// element `(p, q)` at `p·s_r + q·s_c` from the tensor's first element.
#[derive(Clone, Copy)]
struct MatRef {
    rows: usize,
    cols: usize,
    s_r: usize,
    s_c: usize,
    conj: bool,
}

impl MatRef {
    /// `op(t)` for a 2-D tensor.
    fn new(t: &Tensor, op: Trans) -> MatRef {
        let (d, s) = (t.dims(), t.strides());
        let conj = op == Trans::C && t.dtype().is_complex();
        match op {
            Trans::N => MatRef {
                rows: d[0],
                cols: d[1],
                s_r: s[0],
                s_c: s[1],
                conj: false,
            },
            Trans::T | Trans::C => MatRef {
                rows: d[1],
                cols: d[0],
                s_r: s[1],
                s_c: s[0],
                conj,
            },
        }
    }

    /// The transpose (conjugation kept).
    fn t(self) -> MatRef {
        MatRef {
            rows: self.cols,
            cols: self.rows,
            s_r: self.s_c,
            s_c: self.s_r,
            conj: self.conj,
        }
    }

    /// How column-major gemm reads it: its `trans` flag and leading dimension.
    fn blas(self) -> Option<(Trans, usize)> {
        blas_view(self.rows, self.cols, self.s_r, self.s_c, self.conj)
    }
}

/// One gemm call: `op(first) · op(second)` as column-major `rows × cols` with inner
/// dimension `k`, written with leading dimension `ldc`; `swap` when `first` is `b` (the
/// output seen as Cᵀ).
struct GemmPlan {
    t1: Trans,
    ld1: usize,
    t2: Trans,
    ld2: usize,
    rows: usize,
    cols: usize,
    k: usize,
    ldc: usize,
    swap: bool,
}

/// The direct path's decision, made from the layouts alone (before any output is
/// allocated): `a` and `b` are matrices of one data type on one device, with a
/// non-empty inner dimension, and BLAS reads them and an `m × n` output with strides
/// `c_strides` through its `trans` flags and leading dimensions. `None` otherwise: the
/// einsum path then handles the product (and reports the errors).
fn plan(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    c_strides: [usize; 2],
) -> Option<GemmPlan> {
    if a.ndim() != 2 || b.ndim() != 2 || a.dtype() != b.dtype() || a.device() != b.device() {
        return None;
    }
    let (x, y) = (MatRef::new(a, op_a), MatRef::new(b, op_b));
    let (m, k, n) = (x.rows, x.cols, y.cols);
    if y.rows != k || k == 0 {
        return None;
    }
    let c = MatRef {
        rows: m,
        cols: n,
        s_r: c_strides[0],
        s_c: c_strides[1],
        conj: false,
    };
    // Seen column-major, the output is either Cᵀ (n × m, when its rows are contiguous),
    // computed as op(b)ᵀ·op(a)ᵀ, or C (m × n), computed as op(a)·op(b).
    let (swap, ldc) = match c.t().blas()? {
        (Trans::N, ld) => (true, ld),
        (_, ld) => (false, ld),
    };
    let (first, second, rows, cols) = if swap {
        (y.t(), x.t(), n, m)
    } else {
        (x, y, m, n)
    };
    let ((t1, ld1), (t2, ld2)) = (first.blas()?, second.blas()?);
    Some(GemmPlan {
        t1,
        ld1,
        t2,
        ld2,
        rows,
        cols,
        k,
        ldc,
        swap,
    })
}

/// Runs `p`: `out = alpha · op_a(a) · op_b(b) + beta · out`, `out` in a buffer of its
/// own with the layout `p` was made for.
fn run(p: &GemmPlan, a: &Tensor, b: &Tensor, alpha: c64, beta: c64, out: &Tensor) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let (p1, p2) = if p.swap { (b, a) } else { (a, b) };
    let _w = out.buffer.write("matmul")?;
    let _r1 = a.buffer.read("matmul")?;
    let _r2 = b.buffer.read("matmul")?;
    dispatch!(out.dtype(), out.device(), T, D => {
        // SAFETY: both operands and the output lie inside their buffers with the extents
        // and leading dimensions `plan` computed from their own dims and strides
        // (`blas_view` checks that every leading dimension covers its rows); `out` is in a
        // buffer of its own; the guards exclude other access meanwhile.
        unsafe {
            <D as MatMul<T>>::matmul(
                p.t1, p.t2, p.rows, p.cols, p.k, T::cast_from(alpha),
                p1.typed_ptr::<T>(), p.ld1, p2.typed_ptr::<T>(), p.ld2,
                T::cast_from(beta), out.typed_ptr::<T>(), p.ldc,
            )
        }
    })
}

/// The direct path into an existing `out` of the product's shape and the operands' data
/// type and device, in a buffer of its own. `Ok(false)` when it does not apply.
fn gemm_direct(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: c64,
    beta: c64,
    out: &Tensor,
) -> Result<bool> {
    let fits = a.ndim() == 2
        && b.ndim() == 2
        && out.ndim() == 2
        && out.dtype() == a.dtype()
        && out.device() == a.device()
        && !out.shares_memory_with(a)
        && !out.shares_memory_with(b)
        && out.dims() == [MatRef::new(a, op_a).rows, MatRef::new(b, op_b).cols];
    if !fits {
        return Ok(false);
    }
    let Some(p) = plan(a, op_a, b, op_b, [out.strides()[0], out.strides()[1]]) else {
        return Ok(false);
    };
    run(&p, a, b, alpha, beta, out)?;
    Ok(true)
}

/// `op_a(a) · op_b(b)` into a fresh row-major tensor through the direct path, or `None`
/// when it does not apply; nothing is allocated then.
fn product_direct(a: &Tensor, op_a: Trans, b: &Tensor, op_b: Trans) -> Result<Option<Tensor>> {
    if a.ndim() != 2 || b.ndim() != 2 {
        return Ok(None);
    }
    let (m, n) = (MatRef::new(a, op_a).rows, MatRef::new(b, op_b).cols);
    // The row-major strides of the fresh `m × n` result.
    let Some(p) = plan(a, op_a, b, op_b, [n, 1]) else {
        return Ok(None);
    };
    // SAFETY: with a non-empty inner dimension (`plan`) and beta = 0, `run` writes every
    // element of `out` without reading it; on error `out` is dropped unread.
    let out = unsafe { Tensor::uninit(a.dtype(), a.device(), &[m, n])? };
    run(&p, a, b, c64::new(1.0, 0.0), c64::new(0.0, 0.0), &out)?;
    Ok(Some(out))
}

/// `a · b` for matrices (`[m, k] · [k, n]`) and batches of them (`[..., m, k]`, the
/// batch axes broadcasting). Operands in any layout; BLAS reads transposed or
/// column-major operands through its transpose flags, without a copy.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_op(a, Trans::N, b, Trans::N).map_err(|e| e.in_op("matmul"))
}

/// `op_a(a) · op_b(b)`, where `op` is `N` (as is), `T` (the transpose of the last two
/// axes) or `C` (the conjugate transpose), as `zgemm`'s `transa`/`transb`. For the
/// subspace matrix of a block solver, `matmul_op(&psi, Trans::C, &h_psi, Trans::N)` is
/// `ψᴴ H ψ`.
///
/// ```
/// use ctensor_aten::{matmul_op, c64, Tensor, Trans};
/// let psi = Tensor::from_slice(&[c64::new(1.0, 1.0), c64::new(0.0, 2.0)], &[2, 1])?;
/// let s = matmul_op(&psi, Trans::C, &psi, Trans::N)?; // ψᴴψ = |1+i|² + |2i|²
/// assert_eq!(s.to_vec::<c64>()?, [c64::new(6.0, 0.0)]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn matmul_op(a: &Tensor, op_a: Trans, b: &Tensor, op_b: Trans) -> Result<Tensor> {
    if let Some(c) = product_direct(a, op_a, b, op_b).map_err(|e| e.in_op("matmul"))? {
        return Ok(c);
    }
    let (x, y, opts) = operands(
        "matmul",
        a,
        op_a,
        b,
        op_b,
        c64::new(1.0, 0.0),
        c64::new(0.0, 0.0),
    )?;
    einsum("...ij,...jk->...ik", &[&x, &y], &opts).map_err(|e| e.in_op("matmul"))
}

/// `out = alpha · op_a(a) · op_b(b) + beta · out`, into the existing `out` (any layout,
/// e.g. a column-major map over a caller's array). With `beta == 0` the old contents of
/// `out` are not read. `out`'s type must hold the operands' promoted type; `alpha` and
/// `beta` are cast to it.
pub fn matmul_into(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: impl Into<c64>,
    beta: impl Into<c64>,
    out: &mut Tensor,
) -> Result<()> {
    let (alpha, beta) = (alpha.into(), beta.into());
    if gemm_direct(a, op_a, b, op_b, alpha, beta, out).map_err(|e| e.in_op("matmul_into"))? {
        return Ok(());
    }
    let (x, y, opts) = operands("matmul_into", a, op_a, b, op_b, alpha, beta)?;
    einsum_into("...ij,...jk->...ik", &[&x, &y], &opts, out).map_err(|e| e.in_op("matmul_into"))
}

/// The views and einsum options for `op_a(a) · op_b(b)` with `alpha`, `beta`.
fn operands(
    op: &'static str,
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: c64,
    beta: c64,
) -> Result<(Tensor, Tensor, EinsumOptions)> {
    if a.ndim() < 2 || b.ndim() < 2 {
        return Err(Error::ShapeMismatch {
            op,
            expected: "operands of rank 2 or more ([..., m, k] and [..., k, n])".into(),
            got: vec![a.dims().to_vec(), b.dims().to_vec()],
        });
    }
    let view = |t: &Tensor, o: Trans| -> Result<(Tensor, bool)> {
        let n = t.ndim();
        Ok(match o {
            Trans::N => (t.share(), false),
            Trans::T => (t.transpose(n - 2, n - 1)?, false),
            Trans::C => (t.transpose(n - 2, n - 1)?, t.dtype().is_complex()),
        })
    };
    let (x, conj_x) = view(a, op_a)?;
    let (y, conj_y) = view(b, op_b)?;
    Ok((
        x,
        y,
        EinsumOptions {
            conj_x,
            conj_y,
            alpha,
            beta,
        },
    ))
}

/// A slab of [`Tensor::matmul_right_`] holds about this many elements of the product.
const RIGHT_SLAB_ELEMS: usize = 1 << 19;

impl Tensor {
    /// `self := self · y` in place, for a matrix `self` (`[n, m]`) and `y` (`[m, k]`) with
    /// `k ≤ m`: the product is written over the first `k` columns, and `self` becomes
    /// that `[n, k]` view of its memory (with `k = m`, all of it).
    ///
    /// A row of the product needs only its own row of `self`, so the rows are
    /// transformed a slab at a time through one buffer of about 2¹⁹ elements: a block
    /// solver rotates its basis (`V ← V·Y` at a restart) or orthonormalises a block
    /// (`T ← T·R⁻¹`) without a second block-sized array. Any layout `matmul_into` takes
    /// (a column-major map, a column view of a wider matrix); a `y` that shares memory
    /// with `self` is copied first. `y`'s type must promote to `self`'s (a complex `y`
    /// for a real `self` is refused); both on one device.
    ///
    /// ```
    /// use ctensor_aten::Tensor;
    /// let mut v = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let y = Tensor::from_slice(&[1.0f64, 0.0, 1.0, 1.0, 0.0, 1.0], &[3, 2])?;
    /// v.matmul_right_(&y)?;
    /// assert_eq!(v.dims(), &[2, 2]);
    /// assert_eq!(v.to_vec::<f64>()?, [3.0, 5.0, 9.0, 11.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn matmul_right_(&mut self, y: &Tensor) -> Result<()> {
        self.matmul_right_in_slabs(y, RIGHT_SLAB_ELEMS)
    }

    /// [`matmul_right_`](Self::matmul_right_) with slabs of about `slab_elems` elements
    /// of the product (at least one row).
    fn matmul_right_in_slabs(&mut self, y: &Tensor, slab_elems: usize) -> Result<()> {
        let op = "matmul_right_";
        let (d, e) = (self.dims(), y.dims());
        if d.len() != 2 || e.len() != 2 || e[0] != d[1] || e[1] > d[1] {
            return Err(Error::ShapeMismatch {
                op,
                expected: "a matrix [n, m] and a factor [m, k] with k <= m".into(),
                got: vec![d.to_vec(), e.to_vec()],
            });
        }
        let (n, k) = (d[0], e[1]);
        if n > 0 && k > 0 {
            let y = if y.shares_memory_with(self) {
                y.try_clone()?
            } else {
                y.share()
            };
            let rows = (slab_elems / k).clamp(1, n);
            let buf = Tensor::new(self.dtype(), self.device(), &[rows, k])?;
            let mut r0 = 0;
            while r0 < n {
                let rs = rows.min(n - r0);
                let mut out = buf.narrow(0, 0, rs)?;
                let slab = self.narrow(0, r0, rs)?;
                matmul_into(&slab, Trans::N, &y, Trans::N, 1.0, 0.0, &mut out)
                    .map_err(|e| e.in_op(op))?;
                slab.narrow(1, 0, k)?
                    .assign(&out)
                    .map_err(|e| e.in_op(op))?;
                r0 += rs;
            }
        }
        *self = self.narrow(1, 0, k)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctensor_base::{DataType, DeviceType};

    /// Slabs of one row, of a few rows with a partial last one, and one slab for all:
    /// every one gives the plain triple loop's values, in place, for each BLAS dtype
    /// and for a column-major matrix.
    #[test]
    fn matmul_right_gives_the_plain_loop_for_every_slab_size() -> Result<()> {
        let dtypes = [
            DataType::Float,
            DataType::Double,
            DataType::ComplexFloat,
            DataType::ComplexDouble,
        ];
        for (i, dt) in dtypes.into_iter().enumerate() {
            let (n, m, k) = (37, 9, 5);
            let a = Tensor::randn(dt, DeviceType::Cpu, &[n, m], 11 + i as u64)?;
            let y = Tensor::randn(dt, DeviceType::Cpu, &[m, k], 21 + i as u64)?;
            let (av, yv) = (
                a.cast(DataType::ComplexDouble)?.to_vec::<c64>()?,
                y.cast(DataType::ComplexDouble)?.to_vec::<c64>()?,
            );
            let mut want = vec![c64::new(0.0, 0.0); n * k];
            for r in 0..n {
                for c in 0..k {
                    for l in 0..m {
                        want[r * k + c] += av[r * m + l] * yv[l * k + c];
                    }
                }
            }
            let tol = if matches!(dt, DataType::Float | DataType::ComplexFloat) {
                1e-5
            } else {
                1e-13
            };
            for slab in [1, 2 * k + 3, n * k] {
                for col_major in [false, true] {
                    let mut t = if col_major {
                        let c = a.t()?.contiguous()?.t()?;
                        assert_eq!(c.strides(), [1, n]);
                        c
                    } else {
                        a.try_clone()?
                    };
                    let memory = t.share();
                    t.matmul_right_in_slabs(&y, slab)?;
                    assert_eq!(t.dims(), [n, k]);
                    assert!(t.shares_memory_with(&memory));
                    let got = t.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
                    for (f, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g - w).norm() <= tol * (1.0 + w.norm()),
                            "{dt:?} slab {slab} col-major {col_major} [{f}]: {g} vs {w}"
                        );
                    }
                }
            }
        }
        Ok(())
    }
}
