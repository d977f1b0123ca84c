//! Einstein summation over any number of tensors.
//!
//! The plan, for two operands: repeated labels in an operand become a diagonal view;
//! labels found in one operand only and not in the output are summed first; the rest
//! are *batch* (in both operands and the output), *M* (first operand and output), *N*
//! (second operand and output) and *K* (both operands, summed). Each operand is seen
//! as a batch of matrices `[M, K]` / `[K, N]` through its strides; when a BLAS
//! transpose flag (N, T or C) can read that layout, it is passed as is, otherwise
//! (and for a conjugation no flag can express) the operand is copied once into a dense
//! layout. Every batch entry is then one `gemm` (dot and gemv are its `1 × 1` and
//! `n × 1` cases; integer and half types use the plain-loop [`MatMul`] kernel), written
//! straight into `out` with `alpha` and `beta` when `out`'s layout allows, otherwise
//! into a temporary that is added into `out`. Any number of batch axes is allowed,
//! and batch axes broadcast (`...ij,jk->...ik`).
//!
//! Repeated output labels (`i->ii`) place the result on a diagonal of an otherwise zero
//! output; `alpha`/`beta` give `out = alpha · einsum + beta · out`.
//!
//! Three or more operands are contracted left to right, two at a time (NumPy's
//! `einsum` without `optimize`): each intermediate keeps the labels a later operand or
//! the output still needs. `conj_x`/`conj_y` conjugate the first and second operands,
//! `alpha`/`beta` apply to the final step.
//!
//! Operands of different data types are promoted to their common type first
//! ([`promotion`](crate::core::promotion): `f64` with `c64` is `c64`, `f32` with `f64` is
//! `f64`); with [`einsum_into`] the sum is computed in `out`'s type, which must hold the
//! promoted type.

mod contract;
pub(crate) use contract::blas_view;
use contract::Contraction;
mod parse;

use ctensor_base::{c64, CastFrom, Error, Result};
use ctensor_kernels::blas::MatMul;
use ctensor_kernels::blas::Trans;

use crate::core::dispatch::dispatch;
use crate::core::tensor::Tensor;

/// Options of [`einsum`] / [`einsum_into`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EinsumOptions {
    /// Use the conjugate of the first operand (any layout).
    pub conj_x: bool,
    /// Use the conjugate of the second operand (any layout).
    pub conj_y: bool,
    /// Scales the sum: `alpha · einsum(...)` (cast to the dtype; integers take the real
    /// part, truncated).
    pub alpha: c64,
    /// With [`einsum_into`]: `out = alpha · einsum(...) + beta · out`. With `beta == 0`
    /// the old contents of `out` are not read (NaN there does not survive).
    pub beta: c64,
}

impl Default for EinsumOptions {
    fn default() -> Self {
        EinsumOptions {
            conj_x: false,
            conj_y: false,
            alpha: c64::new(1.0, 0.0),
            beta: c64::new(0.0, 0.0),
        }
    }
}

impl EinsumOptions {
    /// Options with `conj_y` set: `einsum("ij,kj->ik", psi, psi)` then builds `ψ ψᴴ`.
    pub fn conj_y() -> Self {
        EinsumOptions {
            conj_y: true,
            ..Default::default()
        }
    }
}

/// Evaluates the equation `eq` over `operands` (one or more) into a new row-major tensor.
///
/// ```
/// use ctensor_aten::{ops::einsum::{einsum, EinsumOptions}, Tensor, c64};
/// let psi = Tensor::from_slice(&[c64::new(1.0, 1.0), c64::new(0.0, 2.0)], &[1, 2])?;
/// let s = einsum("ij,kj->ik", &[&psi, &psi], &EinsumOptions::conj_y())?; // ψψᴴ
/// assert_eq!(s.to_vec::<c64>()?, [c64::new(6.0, 0.0)]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn einsum(eq: &str, operands: &[&Tensor], opts: &EinsumOptions) -> Result<Tensor> {
    let operands = super::promote("einsum", operands)?;
    let operands: Vec<&Tensor> = operands.iter().collect();
    if let Some((eq2, pair, last_opts)) = reduce_to_two(eq, &operands, opts)? {
        let pair: Vec<&Tensor> = pair.iter().collect();
        return Plan::new(&eq2, &pair)?.run(&pair, &last_opts, None);
    }
    let plan = Plan::new(eq, &operands)?;
    plan.run(&operands, opts, None)
}

/// A term written back as equation text (`...` first where the term has one).
fn term_text(t: &parse::Term) -> String {
    t.items
        .iter()
        .map(|i| match i {
            Some(c) => (*c as char).to_string(),
            None => "...".to_string(),
        })
        .collect()
}

/// For three or more operands: contracts all but the last two steps' worth, left to
/// right, and returns the last two-operand equation, its operands and the options of
/// that last step (`None` for one or two operands, which need no chain).
fn reduce_to_two(
    eq: &str,
    operands: &[&Tensor],
    opts: &EinsumOptions,
) -> Result<Option<(String, [Tensor; 2], EinsumOptions)>> {
    if operands.len() <= 2 {
        return Ok(None);
    }
    let parsed = parse::parse(eq, operands.len())?;
    let n = operands.len();
    let mut acc_term = parsed.inputs[0].clone();
    let mut acc = operands[0].share();
    let step_opts = |i: usize| EinsumOptions {
        conj_x: opts.conj_x && i == 1,
        conj_y: opts.conj_y && i == 1,
        ..Default::default()
    };
    for (i, (next, operand)) in parsed
        .inputs
        .iter()
        .zip(operands)
        .enumerate()
        .take(n - 1)
        .skip(1)
    {
        // Labels still needed: by a later operand or by the output.
        let needed = |c: u8| {
            parsed.inputs[i + 1..]
                .iter()
                .chain(std::iter::once(&parsed.output))
                .any(|t| t.letters().any(|l| l == c))
        };
        let mut items: Vec<Option<u8>> = Vec::new();
        if acc_term.has_ellipsis() || next.has_ellipsis() {
            items.push(None);
        }
        for c in acc_term.letters().chain(next.letters()) {
            if needed(c) && !items.contains(&Some(c)) {
                items.push(Some(c));
            }
        }
        let out = parse::Term { items };
        let step = format!(
            "{},{}->{}",
            term_text(&acc_term),
            term_text(next),
            term_text(&out)
        );
        let pair = [&acc, *operand];
        acc = Plan::new(&step, &pair)?.run(&pair, &step_opts(i), None)?;
        acc_term = out;
    }
    let last = format!(
        "{},{}->{}",
        term_text(&acc_term),
        term_text(&parsed.inputs[n - 1]),
        term_text(&parsed.output)
    );
    let last_opts = EinsumOptions {
        alpha: opts.alpha,
        beta: opts.beta,
        ..Default::default()
    };
    Ok(Some((last, [acc, operands[n - 1].share()], last_opts)))
}

/// As [`einsum`], writing `out = alpha · einsum(...) + beta · out` into `out`, which must
/// have the result's shape and dtype; any layout (a transposed view, a column-major
/// [`TensorMap`](crate::TensorMap) over the caller's array) is written in place.
pub fn einsum_into(
    eq: &str,
    operands: &[&Tensor],
    opts: &EinsumOptions,
    out: &mut Tensor,
) -> Result<()> {
    let op = "einsum";
    if let Some(t) = crate::core::promotion::result_type_of(operands.iter().map(|x| x.dtype())) {
        crate::core::promotion::check_can_cast(op, t, out.dtype())?;
    }
    let operands = super::promote_to(op, operands, out.dtype())?;
    let operands: Vec<&Tensor> = operands.iter().collect();
    if let Some((eq2, pair, last_opts)) = reduce_to_two(eq, &operands, opts)? {
        let pair: Vec<&Tensor> = pair.iter().collect();
        return Plan::new(&eq2, &pair)?
            .run(&pair, &last_opts, Some(out))
            .map(|_| ());
    }
    let plan = Plan::new(eq, &operands)?;
    plan.run(&operands, opts, Some(out)).map(|_| ())
}

/// A label after expanding `...`: letters are their byte, ellipsis axes 256 + k.
type Label = u32;

const ELLIPSIS_BASE: Label = 256;

/// An operand after diagonals: a view whose axes carry distinct labels.
struct Operand {
    view: Tensor,
    labels: Vec<Label>,
}

/// The size of every label and the output labels.
struct Plan {
    operands: Vec<Vec<Label>>,
    output: Vec<Label>,
    sizes: Vec<(Label, usize)>,
}

fn label_name(l: Label) -> String {
    if l < ELLIPSIS_BASE {
        format!("'{}'", l as u8 as char)
    } else {
        format!("ellipsis axis {}", l - ELLIPSIS_BASE)
    }
}

impl Plan {
    fn new(eq: &str, operands: &[&Tensor]) -> Result<Plan> {
        let op = "einsum";
        if operands.is_empty() || operands.len() > 2 {
            return Err(Error::InvalidArgument {
                op,
                expected: "at least one operand".into(),
                given: format!("{} operands", operands.len()),
            });
        }
        for t in &operands[1..] {
            super::check_same(op, operands[0], t)?;
        }
        let parsed = parse::parse(eq, operands.len())?;
        // Ellipsis widths, right-aligned and broadcast.
        let mut ell_width = 0;
        let mut ell_of = Vec::new();
        for (t, x) in parsed.inputs.iter().zip(operands) {
            let letters = t.letters().count();
            let w = if t.has_ellipsis() {
                x.ndim().checked_sub(letters)
            } else if x.ndim() == letters {
                Some(0)
            } else {
                None
            };
            let Some(w) = w else {
                return Err(Error::ShapeMismatch {
                    op,
                    expected: format!(
                        "an operand with {} axes{} for the term of \"{eq}\"",
                        letters,
                        if t.has_ellipsis() { " or more" } else { "" }
                    ),
                    got: vec![x.dims().to_vec()],
                });
            };
            ell_width = ell_width.max(w);
            ell_of.push(w);
        }
        let expand = |items: &[Option<u8>], w: usize| -> Vec<Label> {
            let mut out = Vec::new();
            for it in items {
                match it {
                    Some(c) => out.push(*c as Label),
                    None => {
                        out.extend((ell_width - w..ell_width).map(|k| ELLIPSIS_BASE + k as Label))
                    }
                }
            }
            out
        };
        let labels: Vec<Vec<Label>> = parsed
            .inputs
            .iter()
            .zip(&ell_of)
            .map(|(t, &w)| expand(&t.items, w))
            .collect();
        let output = expand(&parsed.output.items, ell_width);
        // Sizes: equal, except that ellipsis axes broadcast from 1.
        let mut sizes: Vec<(Label, usize)> = Vec::new();
        for (ls, x) in labels.iter().zip(operands) {
            for (&l, &n) in ls.iter().zip(x.dims()) {
                match sizes.iter_mut().find(|(k, _)| *k == l) {
                    None => sizes.push((l, n)),
                    Some((_, m)) if *m == n => {}
                    Some((_, m)) if l >= ELLIPSIS_BASE && (*m == 1 || n == 1) => *m = (*m).max(n),
                    Some((_, m)) => {
                        return Err(Error::ShapeMismatch {
                            op,
                            expected: format!(
                                "label {} to have one size in \"{eq}\" (its sizes given)",
                                label_name(l)
                            ),
                            got: vec![vec![*m], vec![n]],
                        })
                    }
                }
            }
        }
        Ok(Plan {
            operands: labels,
            output,
            sizes,
        })
    }

    fn size(&self, l: Label) -> usize {
        self.sizes
            .iter()
            .find(|(k, _)| *k == l)
            .map_or(1, |(_, n)| *n)
    }

    fn unique_output(&self) -> Vec<Label> {
        let mut u: Vec<Label> = Vec::new();
        for &l in &self.output {
            if !u.contains(&l) {
                u.push(l);
            }
        }
        u
    }

    /// Diagonal views for repeated labels, then sums over labels no one else needs.
    fn prepare(&self, k: usize, x: &Tensor, keep: &[Label]) -> Result<Operand> {
        let labels = &self.operands[k];
        let mut uniq: Vec<Label> = Vec::new();
        let mut dims = Vec::new();
        let mut strides: Vec<usize> = Vec::new();
        for (d, &l) in labels.iter().enumerate() {
            match uniq.iter().position(|&u| u == l) {
                Some(p) => {
                    if dims[p] != x.dims()[d] {
                        return Err(Error::ShapeMismatch {
                            op: "einsum",
                            expected: format!(
                                "equal sizes for the repeated label {} (its sizes given)",
                                label_name(l)
                            ),
                            got: vec![vec![dims[p]], vec![x.dims()[d]]],
                        });
                    }
                    strides[p] += x.strides()[d];
                }
                None => {
                    uniq.push(l);
                    dims.push(x.dims()[d]);
                    strides.push(x.strides()[d]);
                }
            }
        }
        let view = x.strided_view(&dims, &strides, 0);
        let sum_axes: Vec<usize> = (0..uniq.len())
            .filter(|&d| !keep.contains(&uniq[d]))
            .collect();
        if sum_axes.is_empty() {
            return Ok(Operand { view, labels: uniq });
        }
        let view = view.sum(&sum_axes)?;
        let labels = uniq.into_iter().filter(|l| keep.contains(l)).collect();
        Ok(Operand { view, labels })
    }

    /// Dims and strides of `op` arranged as `order`, broadcasting size-1 axes (stride 0)
    /// and giving absent labels size 1.
    fn arrange(&self, op: &Operand, order: &[Label]) -> (Vec<usize>, Vec<usize>) {
        order
            .iter()
            .map(|&l| match op.labels.iter().position(|&k| k == l) {
                Some(d) => {
                    let n = self.size(l);
                    let s = if op.view.dims()[d] == 1 && n != 1 {
                        0
                    } else {
                        op.view.strides()[d]
                    };
                    (n, s)
                }
                None => (1, 0),
            })
            .unzip()
    }

    fn run(
        &self,
        operands: &[&Tensor],
        opts: &EinsumOptions,
        out: Option<&mut Tensor>,
    ) -> Result<Tensor> {
        let uniq_out = self.unique_output();
        let out_dims: Vec<usize> = self.output.iter().map(|&l| self.size(l)).collect();
        if let Some(o) = out.as_deref() {
            super::check_same("einsum", operands[0], o)?;
            if o.dims() != out_dims {
                return Err(Error::ShapeMismatch {
                    op: "einsum",
                    expected: format!("an output tensor of shape {out_dims:?}"),
                    got: vec![o.dims().to_vec()],
                });
            }
        }
        if operands.len() == 1 {
            let x = self.prepare(0, operands[0], &uniq_out)?;
            let (dims, strides) = self.arrange(&x, &uniq_out);
            let view = x.view.strided_view(&dims, &strides, 0);
            // Always fresh memory: never hand back a view of the input.
            let ident: Vec<usize> = (0..dims.len()).collect();
            let res = view.permute_copy(&ident, opts.conj_x)?;
            return self.finish(res, &uniq_out, opts, false, out);
        }
        // Labels each operand must keep: the output's and the other operand's.
        let keep_a: Vec<Label> = uniq_out.iter().chain(&self.operands[1]).copied().collect();
        let keep_b: Vec<Label> = uniq_out.iter().chain(&self.operands[0]).copied().collect();
        let a = self.prepare(0, operands[0], &keep_a)?;
        let b = self.prepare(1, operands[1], &keep_b)?;
        let in_a = |l: &Label| a.labels.contains(l);
        let in_b = |l: &Label| b.labels.contains(l);
        let batch: Vec<Label> = uniq_out
            .iter()
            .filter(|l| in_a(l) && in_b(l))
            .copied()
            .collect();
        let m: Vec<Label> = uniq_out
            .iter()
            .filter(|l| in_a(l) && !in_b(l))
            .copied()
            .collect();
        let n: Vec<Label> = uniq_out
            .iter()
            .filter(|l| in_b(l) && !in_a(l))
            .copied()
            .collect();
        let k: Vec<Label> = a
            .labels
            .iter()
            .filter(|l| in_b(l) && !uniq_out.contains(l))
            .copied()
            .collect();
        let gemm = Contraction {
            plan: self,
            a,
            b,
            batch,
            m,
            n,
            k,
        };
        // Straight into `out` when it has no repeated labels and no shared memory.
        let mut out = out;
        if let Some(o) = out.as_deref_mut() {
            let direct = uniq_out.len() == self.output.len()
                && !operands.iter().any(|x| x.shares_memory_with(o));
            if direct {
                let placed = gemm.output_view(o, &uniq_out);
                if let Some(c) = gemm.run(&placed, opts, opts.alpha, opts.beta)? {
                    return Ok(c);
                }
            }
        }
        // Otherwise into a temporary (alpha applied), then placed and added into `out`.
        let c = gemm.fresh_output()?;
        gemm.run(&c, opts, opts.alpha, c64::new(0.0, 0.0))?;
        let res = gemm.to_output_order(&c, &uniq_out)?;
        self.finish(res, &uniq_out, opts, true, out)
    }

    /// `res` holds the result over the distinct output labels `uniq`; place it (on a
    /// diagonal for repeated labels), apply `alpha` (unless done) and `beta`/`out`.
    fn finish(
        &self,
        res: Tensor,
        uniq: &[Label],
        opts: &EinsumOptions,
        alpha_done: bool,
        out: Option<&mut Tensor>,
    ) -> Result<Tensor> {
        let alpha = if alpha_done {
            c64::new(1.0, 0.0)
        } else {
            opts.alpha
        };
        let out_dims: Vec<usize> = self.output.iter().map(|&l| self.size(l)).collect();
        let repeats = uniq.len() != self.output.len();
        // The view of the output that holds `res`: itself, or a diagonal.
        let place = |t: &Tensor| -> Tensor {
            if !repeats {
                return t.share();
            }
            let mut strides = vec![0usize; uniq.len()];
            for (d, &l) in self.output.iter().enumerate() {
                let p = uniq.iter().position(|&u| u == l).unwrap_or(0);
                strides[p] += t.strides()[d];
            }
            let dims: Vec<usize> = uniq.iter().map(|&l| self.size(l)).collect();
            t.strided_view(&dims, &strides, 0)
        };
        match out {
            None => {
                let res = if alpha == c64::new(1.0, 0.0) {
                    res
                } else {
                    res.scaled_in_type(alpha)?
                };
                if !repeats {
                    return Ok(res);
                }
                let full = Tensor::zeros(res.dtype(), res.device(), &out_dims)?;
                let mut diag = place(&full);
                diag.sync(&res)?;
                Ok(full)
            }
            Some(o) => {
                if opts.beta == c64::new(0.0, 0.0) {
                    o.zero()?;
                } else if opts.beta != c64::new(1.0, 0.0) {
                    o.scale_in_type_(opts.beta)?;
                }
                let mut target = place(o);
                target.axpby_(1.0, &res, alpha)?;
                Ok(o.share())
            }
        }
    }
}

#[cfg(test)]
mod tests;
