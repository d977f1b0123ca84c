//! The contraction an einsum plan runs: operands merged into batched matrix products
//! (BLAS `gemm` views where the strides allow, the plain kernel otherwise).

use super::*;

/// The two-operand contraction as a batch of matrix products.
pub(super) struct Contraction<'p> {
    pub(super) plan: &'p Plan,
    pub(super) a: Operand,
    pub(super) b: Operand,
    pub(super) batch: Vec<Label>,
    pub(super) m: Vec<Label>,
    pub(super) n: Vec<Label>,
    pub(super) k: Vec<Label>,
}

/// A group of axes merged into one: its size and stride, or `None` when the axes are
/// not evenly strided.
pub(super) fn merge(dims: &[usize], strides: &[usize]) -> Option<(usize, usize)> {
    let mut size = 1;
    let mut stride = 0;
    for (&n, &s) in dims.iter().zip(strides).rev() {
        if n == 1 {
            continue;
        }
        if size == 1 {
            stride = s;
        } else if s != stride * size {
            return None;
        }
        size *= n;
    }
    Some((size, stride))
}

/// How BLAS reads an `r × c` operand whose element `(p, q)` is at `p·s_r + q·s_c`:
/// `N` with `ld = s_c` for a column-major layout, `T` (`C` to conjugate) with
/// `ld = s_r` for a row-major one. `None` when no flag fits.
pub(crate) fn blas_view(
    r: usize,
    c: usize,
    s_r: usize,
    s_c: usize,
    conj: bool,
) -> Option<(Trans, usize)> {
    if !conj && (r <= 1 || s_r == 1) && (c <= 1 || s_c >= r.max(1)) {
        return Some((Trans::N, if c <= 1 { r.max(1) } else { s_c }));
    }
    if (c <= 1 || s_c == 1) && (r <= 1 || s_r >= c.max(1)) {
        let t = if conj { Trans::C } else { Trans::T };
        return Some((t, if r <= 1 { c.max(1) } else { s_r }));
    }
    None
}

/// Element offsets of every batch entry, for strides per batch axis.
fn batch_offsets(dims: &[usize], strides: &[usize]) -> Vec<usize> {
    let total: usize = dims.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut idx = vec![0usize; dims.len()];
    for _ in 0..total {
        out.push(idx.iter().zip(strides).map(|(i, s)| i * s).sum());
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// One operand as a batch of matrices.
struct MatBatch {
    view: Tensor,
    offsets: Vec<usize>,
    rows: (usize, usize),
    cols: (usize, usize),
    conj: bool,
}

impl<'p> Contraction<'p> {
    fn order(&self, first: &[Label], second: &[Label]) -> Vec<Label> {
        self.batch
            .iter()
            .chain(first)
            .chain(second)
            .copied()
            .collect()
    }

    fn group_dims(&self, g: &[Label]) -> Vec<usize> {
        g.iter().map(|&l| self.plan.size(l)).collect()
    }

    /// Operand `x` as a batch of `rows × cols` matrices (labels `r` × `c`), copied once
    /// into dense memory (with the conjugation applied) when its strides do not merge.
    fn mat_batch(
        &self,
        x: &Operand,
        r: &[Label],
        c: &[Label],
        conj: bool,
        transposed: bool,
    ) -> Result<MatBatch> {
        let order = self.order(r, c);
        let (dims, strides) = self.plan.arrange(x, &order);
        let nb = self.batch.len();
        let nr = r.len();
        let view = x.view.strided_view(&dims, &strides, 0);
        let rows = merge(&dims[nb..nb + nr], &strides[nb..nb + nr]);
        let cols = merge(&dims[nb + nr..], &strides[nb + nr..]);
        if let (Some(rows), Some(cols)) = (rows, cols) {
            let (p, q) = if transposed {
                (cols, rows)
            } else {
                (rows, cols)
            };
            if blas_view(p.0, q.0, p.1, q.1, conj).is_some() {
                return Ok(MatBatch {
                    offsets: batch_offsets(&dims[..nb], &strides[..nb]),
                    view,
                    rows,
                    cols,
                    conj,
                });
            }
        }
        let ident: Vec<usize> = (0..dims.len()).collect();
        let dense = view.permute_copy(&ident, conj)?;
        let (rn, cn) = (
            dims[nb..nb + nr].iter().product(),
            dims[nb + nr..].iter().product::<usize>(),
        );
        let bstrides = dense.strides()[..nb].to_vec();
        Ok(MatBatch {
            offsets: batch_offsets(&dims[..nb], &bstrides),
            view: dense,
            rows: (rn, cn.max(1)),
            cols: (cn, 1),
            conj: false,
        })
    }

    pub(super) fn fresh_output(&self) -> Result<Tensor> {
        let dims: Vec<usize> = self
            .order(&self.m, &self.n)
            .iter()
            .map(|&l| self.plan.size(l))
            .collect();
        Tensor::new(self.a.view.dtype(), self.a.view.device(), &dims)
    }

    /// `out` (whose axes follow `uniq`) seen in `[batch, M, N]` order.
    pub(super) fn output_view(&self, out: &Tensor, uniq: &[Label]) -> Tensor {
        let order = self.order(&self.m, &self.n);
        let perm: Vec<usize> = order
            .iter()
            .map(|l| uniq.iter().position(|u| u == l).unwrap_or(0))
            .collect();
        let dims: Vec<usize> = perm.iter().map(|&p| out.dims()[p]).collect();
        let strides: Vec<usize> = perm.iter().map(|&p| out.strides()[p]).collect();
        out.strided_view(&dims, &strides, 0)
    }

    /// The `[batch, M, N]` result `c` permuted to the order of `uniq` (a view).
    pub(super) fn to_output_order(&self, c: &Tensor, uniq: &[Label]) -> Result<Tensor> {
        let order = self.order(&self.m, &self.n);
        let perm: Vec<usize> = uniq
            .iter()
            .map(|l| order.iter().position(|o| o == l).unwrap_or(0))
            .collect();
        c.permute(&perm)
    }

    /// `c = alpha · A·B + beta · c` for every batch entry, `c` in `[batch, M, N]` order.
    /// `Ok(None)` when `c`'s layout cannot be written by gemm directly.
    pub(super) fn run(
        &self,
        c: &Tensor,
        opts: &EinsumOptions,
        alpha: c64,
        beta: c64,
    ) -> Result<Option<Tensor>> {
        // No output element: nothing to compute, and nothing may be built per entry of
        // the other axes (a [2⁶², 0] operand has 2⁶² batch entries).
        if c.numel() == 0 {
            return Ok(Some(c.share()));
        }
        let nb = self.batch.len();
        let nm = self.m.len();
        let (Some(cm), Some(cn)) = (
            merge(&c.dims()[nb..nb + nm], &c.strides()[nb..nb + nm]),
            merge(&c.dims()[nb + nm..], &c.strides()[nb + nm..]),
        ) else {
            return Ok(None);
        };
        let (mt, nt) = (cm.0, cn.0);
        let kt: usize = self.group_dims(&self.k).iter().product();
        // Seen column-major, `c` is either Cᵀ (N × M, when its N axis is contiguous),
        // computed as Bᵀ·Aᵀ, or C (M × N, when its M axis is), computed as A·B.
        let (rows_are_n, ldc) = match blas_view(nt, mt, cn.1, cm.1, false) {
            Some((Trans::N, ld)) => (true, ld),
            Some((_, ld)) => (false, ld),
            None => return Ok(None),
        };
        let (rows, cols) = if rows_are_n { (nt, mt) } else { (mt, nt) };
        let a = self.mat_batch(&self.a, &self.m, &self.k, opts.conj_x, rows_are_n)?;
        let b = self.mat_batch(&self.b, &self.k, &self.n, opts.conj_y, rows_are_n)?;
        let (first, second) = if rows_are_n { (&b, &a) } else { (&a, &b) };
        let view = |x: &MatBatch| {
            let (r, c) = if rows_are_n {
                (x.cols, x.rows)
            } else {
                (x.rows, x.cols)
            };
            blas_view(r.0, c.0, r.1, c.1, x.conj)
        };
        let (Some((t1, ld1)), Some((t2, ld2))) = (view(first), view(second)) else {
            return Err(Error::Internal {
                op: "einsum",
                what: "an operand layout BLAS cannot read after densifying".into(),
            });
        };
        let c_offsets = batch_offsets(&c.dims()[..nb], &c.strides()[..nb]);
        let _w = c.buffer.write("einsum")?;
        let _r1 = if a.view.shares_memory_with(c) {
            None
        } else {
            Some(a.view.buffer.read("einsum")?)
        };
        let _r2 = if b.view.shares_memory_with(c) || b.view.shares_memory_with(&a.view) {
            None
        } else {
            Some(b.view.buffer.read("einsum")?)
        };
        dispatch!(c.dtype(), c.device(), T, D => {
            let (al, be) = (T::cast_from(alpha), T::cast_from(beta));
            let (p1, p2, pc) = (first.view.typed_ptr::<T>(), second.view.typed_ptr::<T>(), c.typed_ptr::<T>());
            for (i, &oc) in c_offsets.iter().enumerate() {
                // SAFETY: every offset and matrix extent comes from the views' own
                // dims and strides inside their buffers; `c` is in a buffer of its own
                // (checked by the caller) and the guards exclude other access.
                unsafe {
                    <D as MatMul<T>>::matmul(
                        t1, t2, rows, cols, kt, al,
                        p1.wrapping_add(first.offsets[i]), ld1,
                        p2.wrapping_add(second.offsets[i]), ld2,
                        be, pc.wrapping_add(oc), ldc,
                    )?;
                }
            }
            Ok::<(), Error>(())
        })?;
        Ok(Some(c.share()))
    }
}
