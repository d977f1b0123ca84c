//! Comparisons, masks and selection on tensors: [`Tensor::lt`] and friends (element-wise,
//! broadcasting, promoting) give `i32` masks of 0 and 1 (ctensor has no boolean type;
//! masks work anywhere a mask is taken, and `mask * x` promotes); [`Tensor::isnan`],
//! [`Tensor::isfinite`], [`Tensor::isinf`]; [`where_cond`]; [`Tensor::maximum`],
//! [`Tensor::minimum`], [`Tensor::clamp`]; [`Tensor::any`], [`Tensor::all`]; and
//! [`Tensor::vector_norm`] along axes.
//!
//! Complex numbers have no order: `lt`, `le`, `gt`, `ge`, `maximum`, `minimum` and
//! `clamp` refuse them (`Error::UnsupportedDType`); `equal` and `not_equal` compare both
//! parts. NaN compares false except in `not_equal` (IEEE), and `maximum`/`minimum`
//! propagate it (NumPy's rules).

use ctensor_base::{DataType, Error, Result};
use ctensor_kernels::elementwise::compare::{Class, CmpOp, Select};

use super::{dense_as, elementwise, promote, promote_to, shape_of};
use crate::core::dispatch::{dispatch, dispatch_blas};
use crate::core::promotion::Number;
use crate::core::tensor::Tensor;
use ctensor_base::{CastFrom, Scalar};

/// `x op y` as an `i32` mask, broadcasting and promoting (the element-wise engine).
fn compare(op_name: &'static str, op: CmpOp, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    elementwise::compare(op_name, op, x, y)
}

/// `x op s` for a number `s`, compared in the type of their weak promotion; an integer
/// that type cannot hold is compared in `i64`, so the answer is right rather than an
/// overflow (NumPy 2 compares out-of-range Python integers the same way).
fn compare_number(op_name: &'static str, op: CmpOp, x: &Tensor, s: Number) -> Result<Tensor> {
    let mut dtype = s.result_type_with(x.dtype());
    if s.check_fits(op_name, dtype).is_err() {
        dtype = DataType::Int64;
    }
    let n = s.tensor(dtype, x.device())?;
    let x = promote_to(op_name, &[x], dtype)?.remove(0);
    compare(op_name, op, &x, &n)
}

macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident, $scalar:ident, $op:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    compare(stringify!($name), CmpOp::$op, self, other)
                }

                #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name), ") with a number (weak promotion, as [`Number`]).")]
                pub fn $scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
                    compare_number(stringify!($scalar), CmpOp::$op, self, s.into())
                }
            )*
        }
    };
}

comparisons! {
    /// `self < other` element-wise as an `i32` 0/1 mask (broadcasting, promoting).
    lt, lt_scalar, Lt;
    /// `self <= other` element-wise as an `i32` 0/1 mask.
    le, le_scalar, Le;
    /// `self > other` element-wise as an `i32` 0/1 mask.
    gt, gt_scalar, Gt;
    /// `self >= other` element-wise as an `i32` 0/1 mask.
    ge, ge_scalar, Ge;
    /// `self == other` element-wise as an `i32` 0/1 mask (NumPy's `equal`; `==` on
    /// tensors is whole-tensor equality).
    #[doc(alias = "eq")]
    equal, equal_scalar, Eq;
    /// `self != other` element-wise as an `i32` 0/1 mask (NumPy's `not_equal`).
    #[doc(alias = "ne")]
    not_equal, not_equal_scalar, Ne;
}

/// [`where_cond`] under its former name (a trailing `_` means in place everywhere else).
#[deprecated(note = "renamed `where_cond`")]
pub fn where_(mask: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    where_cond(mask, a, b)
}

/// `mask ? a : b` element-wise: `mask` (any dtype; nonzero and NaN count as true), `a`
/// and `b` broadcast together; `a` and `b` promote to their common type (NumPy's and
/// PyTorch's `where`).
///
/// ```
/// use ctensor_aten::{where_cond, Tensor};
/// let x = Tensor::from_slice(&[-1.0f64, 2.0, -3.0], &[3])?;
/// let relu = where_cond(&x.gt_scalar(0.0)?, &x, &Tensor::scalar(0.0f64)?)?;
/// assert_eq!(relu.to_vec::<f64>()?, [0.0, 2.0, 0.0]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn where_cond(mask: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let op = "where_cond";
    let shape = shape_of(op, &[mask, a, b])?;
    // The kernel takes any nonzero i32 as true; other masks become 0/1 first.
    let m = if mask.dtype() == DataType::Int {
        mask.share()
    } else {
        mask.not_equal_scalar(0)?
    };
    let m = dense_as(&m, &shape)?;
    let p = promote(op, &[a, b])?;
    let (x, y) = (dense_as(&p[0], &shape)?, dense_as(&p[1], &shape)?);
    let out = Tensor::new(x.dtype(), a.device(), &shape)?;
    let _w = out.buffer.write(op)?;
    let _r = (m.buffer.read(op)?, x.buffer.read(op)?, y.buffer.read(op)?);
    dispatch!(x.dtype(), x.device(), T, D => {
        // SAFETY: every operand dense with numel elements (the mask i32), on this device;
        // `out` is fresh; the guards hold them.
        unsafe { <D as Select<T>>::select(out.numel(), m.typed_ptr::<i32>(), x.typed_ptr::<T>(), y.typed_ptr::<T>(), out.typed_ptr::<T>()) }
    })?;
    drop((_w, _r));
    Ok(out)
}

impl Tensor {
    fn classify(&self, op: &'static str, what: Class) -> Result<Tensor> {
        elementwise::classify(op, what, self)
    }

    /// 1 where the element is NaN (either part for complex), else 0 (`i32`).
    pub fn isnan(&self) -> Result<Tensor> {
        self.classify("isnan", Class::Nan)
    }

    /// 1 where the element is finite (both parts for complex; every integer), else 0.
    pub fn isfinite(&self) -> Result<Tensor> {
        self.classify("isfinite", Class::Finite)
    }

    /// 1 where the element is ±infinity (in a part, for complex) and not NaN, else 0.
    pub fn isinf(&self) -> Result<Tensor> {
        self.classify("isinf", Class::Inf)
    }

    fn extreme2(&self, op: &'static str, max: bool, other: &Tensor) -> Result<Tensor> {
        elementwise::extreme(op, max, self, other)
    }

    /// The element-wise maximum of `self` and `other` (broadcasting, promoting); NaN in
    /// either gives NaN (NumPy's `maximum`).
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        self.extreme2("maximum", true, other)
    }

    /// The element-wise minimum; NaN in either gives NaN (NumPy's `minimum`).
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        self.extreme2("minimum", false, other)
    }

    /// Each element limited to `[lo, hi]` (either bound optional; weak promotion of the
    /// numbers); NaN stays NaN. `lo > hi` is an error; an integer bound out of an `i32`
    /// tensor's range is no bound on its own side (`hi` above `i32::MAX`) and
    /// `Error::Overflow` on the other (`hi` below `i32::MIN`), as NumPy 2's `clip`.
    pub fn clamp(
        &self,
        lo: Option<impl Into<Number>>,
        hi: Option<impl Into<Number>>,
    ) -> Result<Tensor> {
        let op = "clamp";
        let (lo, hi) = (lo.map(Into::into), hi.map(Into::into));
        if let (Some(l), Some(h)) = (lo, hi) {
            // NaN bounds compare unordered and are refused too.
            let ordered = matches!(
                l.to_c64().re.partial_cmp(&h.to_c64().re),
                Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
            );
            if !ordered {
                return Err(Error::InvalidArgument {
                    op,
                    expected: "bounds with lo <= hi".into(),
                    given: format!("lo = {l:?}, hi = {h:?}"),
                });
            }
        }
        // An integer bound beyond the type's range on the side it limits bounds nothing
        // (every element already lies within it), as NumPy 2's `clip`; beyond the range on
        // the other side its answer cannot be stored, an `Overflow` from `tensor` below.
        let beyond = |n: Option<Number>, above: bool| match n {
            Some(Number::Int(i)) if self.dtype() == DataType::Int => {
                if above {
                    i > i64::from(i32::MAX)
                } else {
                    i < i64::from(i32::MIN)
                }
            }
            _ => false,
        };
        let lo = if beyond(lo, false) { None } else { lo };
        let hi = if beyond(hi, true) { None } else { hi };
        let mut out = self.share();
        if let Some(l) = lo {
            let dtype = l.result_type_with(out.dtype());
            let l = l.tensor(dtype, self.device()).map_err(|e| e.in_op(op))?;
            out = out.extreme2(op, true, &l)?;
        }
        if let Some(h) = hi {
            let dtype = h.result_type_with(out.dtype());
            let h = h.tensor(dtype, self.device()).map_err(|e| e.in_op(op))?;
            out = out.extreme2(op, false, &h)?;
        }
        if lo.is_none() && hi.is_none() {
            out = self.try_clone()?;
        }
        Ok(out)
    }

    /// The number of nonzero elements (NaN counts), on the host.
    fn count_nonzero(&self) -> Result<usize> {
        let m = self.not_equal_scalar(0)?.cast(DataType::Int64)?;
        Ok(m.sum_all()?.item::<i64>()? as usize)
    }

    /// Whether any element is nonzero (NaN counts as nonzero); `false` when empty.
    pub fn any(&self) -> Result<bool> {
        Ok(self.count_nonzero()? > 0)
    }

    /// Whether every element is nonzero (NaN counts as nonzero); `true` when empty.
    pub fn all(&self) -> Result<bool> {
        Ok(self.count_nonzero()? == self.numel())
    }
}

/// Which norm [`Tensor::vector_norm`] computes along its axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum NormOrd {
    /// `√Σ|x|²` (the Euclidean norm; over two axes, the Frobenius norm).
    #[default]
    Two,
    /// `Σ|x|`.
    One,
    /// `max |x|`.
    Inf,
}

impl Tensor {
    /// The norm of `ord` over `axes` (the other axes are kept): the 2-norm of each
    /// column of a `[n, k]` block is `x.vector_norm(&[0], NormOrd::Two)`. The result is
    /// real (`f64` for `c64`). The 2-norm scales by the largest modulus first, so it
    /// neither overflows nor underflows where the norm itself is representable (as
    /// LAPACK's `?nrm2`); infinities give +∞ and NaN gives NaN. Not for integers (cast
    /// first).
    ///
    /// On the host, the 2-norm along one axis of an `f32`, `f64`, `c32` or `c64` tensor
    /// is one BLAS `?nrm2` call per result element, reading the tensor where it lies
    /// (strided, no temporaries): the column norms of a block of bands. Elsewhere, a
    /// large tensor is taken in slabs along its longest kept axis, about 2¹⁹ elements
    /// each, and the moduli are scaled and squared in place, so the temporaries stay at
    /// one slab's size: the column norms of a `[24 000, 132]` block need no block-sized
    /// temporary. Each result element comes from the same arithmetic either way.
    pub fn vector_norm(&self, axes: &[usize], ord: NormOrd) -> Result<Tensor> {
        const SLAB: usize = 1 << 19;
        let nd = self.ndim();
        if let ([axis], NormOrd::Two) = (axes, ord) {
            if let Some(norms) = self.norms_by_nrm2(*axis)? {
                return Ok(norms);
            }
        }
        let valid = axes
            .iter()
            .enumerate()
            .all(|(i, &a)| a < nd && !axes[..i].contains(&a));
        let longest = (0..nd)
            .filter(|d| !axes.contains(d))
            .max_by_key(|&d| self.dims()[d]);
        if let (true, Some(k)) = (valid && self.numel() > 2 * SLAB, longest) {
            let n = self.dims()[k];
            let step = (SLAB / (self.numel() / n)).max(1);
            if step < n {
                let parts = (0..n)
                    .step_by(step)
                    .map(|s| self.narrow(k, s, step.min(n - s))?.norm_whole(axes, ord))
                    .collect::<Result<Vec<Tensor>>>()?;
                let at = (0..k).filter(|d| !axes.contains(d)).count();
                return crate::cat(&parts.iter().collect::<Vec<_>>(), at);
            }
        }
        self.norm_whole(axes, ord)
    }

    /// The 2-norms along `axis` by `?nrm2`, one call per kept position (`None` where
    /// that path does not apply: not on the host, not a BLAS type, an empty axis or
    /// result, or a length BLAS cannot take). A norm that comes back infinite is +∞ only
    /// if its vector holds no NaN (NumPy's answer; BLAS implementations differ there).
    fn norms_by_nrm2(&self, axis: usize) -> Result<Option<Tensor>> {
        let (dims, strides) = (self.dims(), self.strides());
        let Some(&n) = dims.get(axis) else {
            return Ok(None);
        };
        let inc = strides[axis];
        let kept: Vec<(usize, usize)> = (0..dims.len())
            .filter(|&d| d != axis)
            .map(|d| (dims[d], strides[d]))
            .collect();
        let count: usize = kept.iter().map(|k| k.0).product();
        if self.device() != ctensor_base::DeviceType::Cpu
            || !self.dtype().is_blas()
            || n == 0
            || count == 0
            || i32::try_from(n).is_err()
            || i32::try_from(inc).is_err()
        {
            return Ok(None);
        }
        let out_dims: Vec<usize> = kept.iter().map(|k| k.0).collect();
        let _r = self.buffer.read("vector_norm")?;
        dispatch_blas!(self.dtype(), self.device(), "vector_norm", T, D => {
            let base = self.typed_ptr::<T>();
            let mut out = Vec::with_capacity(count);
            let mut index = vec![0usize; kept.len()];
            let mut at = 0usize;
            for _ in 0..count {
                // SAFETY: `at` is the offset of a kept position inside the tensor's
                // view, so `x` points into the buffer the read guard holds.
                let x = unsafe { base.add(at) };
                // SAFETY: the `n` elements from `x` along `axis`, `inc` apart, lie in the
                // view too.
                let mut v = unsafe {
                    <D as ctensor_kernels::blas::BlasNrm2<T>>::nrm2(n, x, inc as isize)
                }?;
                if v.to_c64().re.is_infinite()
                    // SAFETY: as above, element by element.
                    && (0..n).any(|i| unsafe { *x.add(i * inc) }.to_c64().is_nan())
                {
                    v = <<T as Scalar>::Real as CastFrom<f64>>::cast_from(f64::NAN);
                }
                out.push(v);
                // The next kept position, row-major.
                for d in (0..kept.len()).rev() {
                    index[d] += 1;
                    at += kept[d].1;
                    if index[d] < kept[d].0 {
                        break;
                    }
                    at -= kept[d].1 * kept[d].0;
                    index[d] = 0;
                }
            }
            Tensor::from_vec(out, &out_dims).map(Some)
        })
    }

    /// [`vector_norm`](Self::vector_norm) of the whole tensor at once.
    fn norm_whole(&self, axes: &[usize], ord: NormOrd) -> Result<Tensor> {
        let op = "vector_norm";
        if self.dtype().is_integer() {
            return Err(Error::UnsupportedDType {
                op,
                dtype: self.dtype(),
                supported: "f32, f64, c32, c64, f16, bf16 (cast integers first)",
            });
        }
        let a = self.abs()?;
        // Empty axes: the 1- and 2-norms of nothing are 0 (sums); ∞ has no maximum.
        let count: usize = axes.iter().filter_map(|&ax| self.dims().get(ax)).product();
        match ord {
            NormOrd::One => a.sum(axes),
            NormOrd::Two if count == 0 => a.sum(axes),
            NormOrd::Inf => a.max(axes).map_err(|e| e.in_op(op)),
            NormOrd::Two => {
                // s = max |x| along the axes, kept as size-1 axes for broadcasting.
                let s = a.max(axes)?;
                let mut keep: Vec<i64> = self.dims().iter().map(|&d| d as i64).collect();
                for &ax in axes {
                    if let Some(d) = keep.get_mut(ax) {
                        *d = 1;
                    }
                }
                let s_kept = s.reshape(&keep)?;
                // Zero and infinite maxima divide by 1 instead (0/0 and ∞/∞ are NaN).
                let one = Tensor::scalar(1.0f64)?.to_device(self.device())?;
                let bad = s_kept.equal_scalar(0)?.add(&s_kept.isinf()?)?;
                let scale = where_cond(&bad, &one.cast(s_kept.dtype())?, &s_kept)?;
                // The moduli are this call's own: scaled and squared where they lie, so a
                // slab needs one temporary of its size, not three.
                let mut y = a;
                y.div_(&scale)?;
                y.mul_(&y.share())?;
                let r = y.sum(axes)?.sqrt()?.mul(
                    &scale.reshape(&s.dims().iter().map(|&d| d as i64).collect::<Vec<_>>())?,
                )?;
                // Where the maximum is infinite the norm is: y held NaN there.
                where_cond(&s.isinf()?, &s, &r)
            }
        }
    }
}
