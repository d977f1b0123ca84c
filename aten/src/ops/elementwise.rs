//! Element-wise arithmetic with NumPy broadcasting, for all eight data types.
//!
//! Operands of different data types are promoted to their common type
//! ([`promotion`](crate::core::promotion)): `f64 + c64` is `c64`, `i32 · f32` is `f32`.
//! Plain numbers (`t.mul_scalar(2.0)`, `&t * c64::i()`) promote weakly: they lift the kind
//! (a complex number makes a real tensor complex) but never widen the tensor.
//!
//! Operands of any strides are accepted: row-major dense operands of the result's
//! shape go to the kernel as they are (views included); on the host, broadcast operands
//! and views of rows are read one cache-sized block at a time ([`host_blocks`]); others
//! are first copied into a dense temporary (by slabs of rows of a large output).
//! Results are row-major. In place (`a.add_(&b)`, also `a.add_(&a)`) is correct: an
//! operand that is the output itself is read by the kernel from the same memory it
//! writes, and any other overlap goes through a copy.
//!
//! Rust's `+=` cannot return an error and ctensor never panics on bad input, so
//! compound assignment is spelled `add_`, `sub_`, `mul_`, `div_` (as in PyTorch) and
//! returns `Result<()>`; `&a + &b` returns `Result<Tensor>`.

use ctensor_base::{c64, CastFrom, DataType, DeviceType, Error, Result, Scalar};
use ctensor_kernels::elementwise::broadcast::{host_blocks, Operand};
use ctensor_kernels::elementwise::compare::{Class, Classify, CmpOp, Compare, Extreme2};
use ctensor_kernels::elementwise::math::{BinaryMath, BinaryMathOp, Math, MathOp, MathScalar};
use ctensor_kernels::elementwise::{Abs, Add, Div, Fma, Mul};

use super::{broadcast_shapes, check_device, promote_to};
use crate::core::buffer::ReadGuard;
use crate::core::dispatch::{dispatch, with_dtype};
use crate::core::promotion::{check_can_cast, result_type_of, Number};
use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// What an element-wise call computes (scalars in complex double, cast to the dtype).
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// `αx + βy`
    Add(c64, c64),
    /// `αx∘y`
    Mul(c64),
    /// `αx / y`
    Div(c64),
    /// `αx∘y + βz`
    Fma(c64, c64),
    /// `αx`
    Scale(c64),
    /// `op(x)`
    Math(MathOp),
    /// `op(x, y)`
    Binary(BinaryMathOp),
    /// `x op y` as an `i32` 0/1 mask
    Compare(CmpOp),
    /// `max(x, y)` (`min` for `false`), NaN propagating
    Extreme(bool),
    /// whether `x` is of a class, as an `i32` 0/1 mask
    Classify(Class),
}

impl Kind {
    fn arity(self) -> usize {
        match self {
            Kind::Add(..)
            | Kind::Mul(_)
            | Kind::Div(_)
            | Kind::Binary(_)
            | Kind::Compare(_)
            | Kind::Extreme(_) => 2,
            Kind::Fma(..) => 3,
            Kind::Scale(_) | Kind::Math(_) | Kind::Classify(_) => 1,
        }
    }

    /// The result's type for inputs (promoted) of type `input`: masks are `i32`.
    fn out_dtype(self, input: DataType) -> DataType {
        match self {
            Kind::Compare(_) | Kind::Classify(_) => DataType::Int,
            _ => input,
        }
    }
}

/// The common case, which needs no promotion, broadcast or copy: every input has
/// `like`'s data type, device and shape, and is dense row-major.
fn plain(inputs: &[&Tensor], like: &Tensor) -> bool {
    inputs.iter().all(|x| {
        x.dtype() == like.dtype()
            && x.device() == like.device()
            && x.dims() == like.dims()
            && x.is_contiguous()
    })
}

/// The same elements at the same addresses (through one buffer or two over the same
/// memory): the in-place case.
fn same_view(a: &Tensor, b: &Tensor) -> bool {
    a.shares_memory_with(b)
        && a.dtype() == b.dtype()
        && a.elem_ptr() == b.elem_ptr()
        && a.dims() == b.dims()
        && a.strides() == b.strides()
}

/// `x` as a dense row-major operand of `out`'s shape in the kernel's type `dtype`: `out`
/// itself when `x` is the same view (in place), `x` when it is dense, of that shape and
/// type and in another buffer, else a copy of its broadcast (cast first when its type
/// differs).
fn operand(out: &Tensor, x: &Tensor, dtype: DataType) -> Result<Tensor> {
    if x.dtype() != dtype {
        let c = x.cast(dtype)?;
        return operand(out, &c, dtype);
    }
    if same_view(x, out) {
        return Ok(out.share());
    }
    let b = x.broadcast_to(out.dims())?;
    if b.is_contiguous() && !b.shares_memory_with(out) && b.numel() == x.numel() {
        Ok(b)
    } else {
        b.copy_in_order(Order::RowMajor)
    }
}

/// The axis order in which a tensor that is not row-major is dense (its axes sorted by
/// decreasing stride), or `None` when it is row-major already or not dense in any order.
fn dense_permutation(t: &Tensor) -> Option<Vec<usize>> {
    if t.is_contiguous() || t.ndim() < 2 {
        return None;
    }
    let mut perm: Vec<usize> = (0..t.ndim()).collect();
    // Stable: axes of equal stride (sizes 0 and 1) keep their order.
    perm.sort_by_key(|&k| std::cmp::Reverse(t.strides()[k]));
    let p = t.permute(&perm).ok()?;
    p.is_contiguous().then_some(perm)
}

/// One element-wise computation: the op's name (for errors), what it computes, and the
/// type the kernel works in (operands of another type are cast as they are read).
#[derive(Clone, Copy)]
struct Work {
    op: &'static str,
    kind: Kind,
    dtype: DataType,
}

/// Computes `w` of `inputs` into `out` (whose shape is the broadcast shape).
fn run_into(w: Work, inputs: &[&Tensor], out: &Tensor) -> Result<()> {
    let op = w.op;
    if let Some(perm) = dense_permutation(out) {
        // Dense in another axis order (column-major, a transposed block): element-wise
        // work does not care about the order, so every operand is permuted alike and the
        // kernel writes `out` where it lies (no temporary, no copy back; operands
        // already in that order are read in place).
        let out_p = out.permute(&perm)?;
        let inputs: Vec<Tensor> = inputs
            .iter()
            .map(|x| x.broadcast_to(out.dims())?.permute(&perm))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = inputs.iter().collect();
        return run_row_major(w, &refs, &out_p);
    }
    if !out.is_contiguous() {
        if let Some(axis) = slab_axis(out) {
            // A large strided output whose operands are itself or apart from it (a
            // column window of a wider block, as a solver's basis hands out): a slab
            // along its outermost axis at a time, so the dense temporary and the
            // operands' copies below are slab-sized, not the output's size.
            if inputs
                .iter()
                .all(|x| same_view(x, out) || !x.shares_memory_with(out))
            {
                return by_slabs(w, inputs, out, axis);
            }
        }
        // A strided output (a transposed view, a Fortran-order map): compute densely,
        // then copy into it.
        // SAFETY: `run_dense` writes every element of the dense `tmp` before it is read.
        let tmp = unsafe { Tensor::uninit(out.dtype(), out.device(), out.dims())? };
        run_operands(w, inputs, &tmp)?;
        return Tensor::copy_values(out, &tmp, op);
    }
    run_row_major(w, inputs, out)
}

/// The axis along which a strided output of more than [`SLAB`] elements is split into
/// slabs: its outermost (largest stride) of more than one entry; `None` for a smaller
/// output.
fn slab_axis(out: &Tensor) -> Option<usize> {
    if out.numel() <= SLAB {
        return None;
    }
    (0..out.ndim())
        .filter(|&k| out.dims()[k] > 1)
        .max_by_key(|&k| (out.strides()[k], std::cmp::Reverse(k)))
}

/// [`run_into`] a slab of `out` along `axis` at a time (each at most [`SLAB`] elements
/// when one entry of `axis` is no more; otherwise split again inside). The operands are
/// `out` itself or apart from it, so no slab reads what another wrote.
fn by_slabs(w: Work, inputs: &[&Tensor], out: &Tensor, axis: usize) -> Result<()> {
    let size = out.dims()[axis];
    let per = out.numel() / size;
    let step = (SLAB / per.max(1)).max(1);
    let full: Vec<Tensor> = inputs
        .iter()
        .map(|x| x.broadcast_to(out.dims()))
        .collect::<Result<_>>()?;
    let mut start = 0;
    while start < size {
        let len = step.min(size - start);
        let part: Vec<Tensor> = full
            .iter()
            .map(|x| x.narrow(axis, start, len))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = part.iter().collect();
        run_into(w, &refs, &out.narrow(axis, start, len)?)?;
        start += len;
    }
    Ok(())
}

/// Elements per slab of a chunked element-wise op (twice the kernels' threading
/// threshold, so each slab still runs on every thread).
const SLAB: usize = 2 * ctensor_kernels::parallel::DEFAULT_PARALLEL_THRESHOLD;

/// `kind` of `inputs` into the dense row-major `out`, in the kernel type `dtype`.
/// Operands that the kernel cannot read in place (broadcast, strided, of another type)
/// are made dense; on the host, when none of them overlaps `out`, that is done one slab
/// of leading rows at a time, so a broadcast or promoted operand (`x * column`,
/// `complex / real`) costs a slab-sized buffer, not an output-sized copy.
fn run_row_major(w: Work, inputs: &[&Tensor], out: &Tensor) -> Result<()> {
    let dtype = w.dtype;
    // What `operand` hands over without a copy.
    let readable = |x: &Tensor| {
        x.dtype() == dtype
            && (same_view(x, out)
                || x.broadcast_to(out.dims()).is_ok_and(|b| {
                    b.is_contiguous() && !b.shares_memory_with(out) && b.numel() == x.numel()
                }))
    };
    // What the host can read block by block without a type cast or an output-wide
    // copy: a view of the kernel's type in another buffer whose innermost axis of more
    // than one element is contiguous (a broadcast row or column, a block of rows).
    let blockable = |x: &Tensor| {
        x.dtype() == dtype
            && !x.shares_memory_with(out)
            && x.dims()
                .iter()
                .zip(x.strides())
                .rev()
                .find(|(&n, _)| n > 1)
                .is_none_or(|(_, &s)| s == 1)
    };
    // Integer division checks its divisors for zeros before it writes anything: one
    // kernel call over whole operands, since by blocks or slabs a zero met in a later
    // one would leave the earlier ones written.
    if matches!(w.kind, Kind::Div(_)) && dtype.is_integer() {
        return run_operands(w, inputs, out);
    }
    // At most three operands: the flags live on the stack.
    let mut read = [true; 3];
    for (r, x) in read.iter_mut().zip(inputs) {
        *r = readable(x);
    }
    let read = &read[..inputs.len()];
    // Some operand is not readable, and each of those is `f`.
    let others_are = |f: &dyn Fn(&Tensor) -> bool| {
        read.contains(&false) && inputs.iter().zip(read).all(|(x, &r)| r || f(x))
    };
    if out.device() == DeviceType::Cpu && others_are(&blockable) {
        return run_blocks(w, inputs, read, out);
    }
    let rows = out.dims().first().copied().unwrap_or(1);
    let slabs = out.device() == DeviceType::Cpu
        && out.ndim() >= 2
        && out.numel() > SLAB
        && rows > 1
        && others_are(&|x| !x.shares_memory_with(out));
    if !slabs {
        return run_operands(w, inputs, out);
    }
    let step = (SLAB / (out.numel() / rows)).max(1);
    let full: Vec<Tensor> = inputs
        .iter()
        .map(|x| x.broadcast_to(out.dims()))
        .collect::<Result<_>>()?;
    for start in (0..rows).step_by(step) {
        let len = step.min(rows - start);
        let parts: Vec<Tensor> = full
            .iter()
            .map(|x| x.narrow(0, start, len))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = parts.iter().collect();
        run_operands(w, &refs, &out.narrow(0, start, len)?)?;
    }
    Ok(())
}

/// [`run_dense`] on the inputs made into operands of `out` ([`operand`]).
fn run_operands(w: Work, inputs: &[&Tensor], out: &Tensor) -> Result<()> {
    let Work { op, kind, dtype } = w;
    let ops: Vec<Tensor> = inputs
        .iter()
        .map(|x| operand(out, x, dtype))
        .collect::<Result<_>>()?;
    let refs: Vec<&Tensor> = ops.iter().collect();
    run_dense(op, kind, &refs, out)
}

/// The kernel call proper: every input is dense row-major of `out`'s shape and either
/// `out` itself or in another buffer.
fn run_dense(op: &'static str, kind: Kind, inputs: &[&Tensor], out: &Tensor) -> Result<()> {
    let _w = out.buffer.write(op)?;
    let _r = read_guards(op, inputs, out)?;
    let n = out.numel();
    // The inputs' type: the output's, but for masks (whose output is i32).
    dispatch!(inputs[0].dtype(), out.device(), T, D => {
        let p: [*const T; 3] = std::array::from_fn(|i| {
            inputs.get(i).map_or(std::ptr::null(), |x| x.typed_ptr::<T>() as *const T)
        });
        // SAFETY: every pointer addresses `n` dense elements of dtype T inside its
        // buffer (the output: of i32 for the mask kinds, T for the others); each input is
        // at `out`'s addresses or disjoint from `out` (callers copy any other overlap,
        // `shares_memory_with`); the guards above exclude other access meanwhile.
        unsafe { kernel::<T, D>(kind, n, p, out.typed_ptr::<T>(), out.typed_ptr::<i32>()) }
    })
    .map_err(|e| e.in_op(op))
}

/// Read guards of the inputs that do not share `out`'s memory (at most three: on the
/// stack); those that do are `out` itself, covered by its write guard.
fn read_guards<'a>(
    op: &'static str,
    inputs: &[&'a Tensor],
    out: &Tensor,
) -> Result<[Option<ReadGuard<'a>>; 3]> {
    let mut guards: [Option<ReadGuard<'a>>; 3] = [None, None, None];
    for (guard, x) in guards.iter_mut().zip(inputs) {
        if !x.shares_memory_with(out) {
            *guard = Some(x.buffer.read(op)?);
        }
    }
    Ok(guards)
}

/// `kind` on `n` elements: the inputs `p` (null beyond the kind's arity), the output `z`
/// for the arithmetic kinds and `mask` for the mask kinds (the other one unused).
///
/// # Safety
/// Every input used is valid for reads of `n` elements of `T`, and the output used for
/// writes of `n` elements; each input is the output's memory or disjoint from it; nothing
/// else accesses them meanwhile.
unsafe fn kernel<T, D>(
    kind: Kind,
    n: usize,
    p: [*const T; 3],
    z: *mut T,
    mask: *mut i32,
) -> Result<()>
where
    T: MathScalar + CastFrom<c64>,
    D: Add<T>
        + Mul<T>
        + Div<T>
        + Fma<T>
        + Math<T>
        + BinaryMath<T>
        + Compare<T>
        + Extreme2<T>
        + Classify<T>,
{
    let s = |v: c64| T::cast_from(v);
    // SAFETY: forwarded contract.
    unsafe {
        match kind {
            Kind::Add(a, b) => D::add(n, s(a), p[0], s(b), p[1], z),
            Kind::Mul(a) => D::mul(n, s(a), p[0], p[1], z),
            Kind::Div(a) => D::div(n, s(a), p[0], p[1], z),
            Kind::Fma(a, b) => D::fma(n, s(a), p[0], p[1], s(b), p[2], z),
            Kind::Scale(a) => D::scale(n, s(a), p[0], z),
            Kind::Math(f) => D::math(f, n, p[0], z),
            Kind::Binary(f) => D::binary_math(f, n, p[0], p[1], z),
            Kind::Compare(c) => D::compare(c, n, p[0], p[1], mask),
            Kind::Extreme(max) => D::extreme2(max, n, p[0], p[1], z),
            Kind::Classify(c) => D::classify(c, n, p[0], mask),
        }
    }
}

/// `w` of `inputs` into the dense row-major host tensor `out`, block by block
/// ([`host_blocks`]): the inputs marked `read` (`out` itself, or dense of its shape in
/// another buffer) are read where they lie, the others (broadcast, or strided with unit
/// inner stride; of the kernel's type and disjoint from `out`) are copied one
/// cache-sized block at a time.
fn run_blocks(w: Work, inputs: &[&Tensor], read: &[bool], out: &Tensor) -> Result<()> {
    let Work { op, kind, dtype } = w;
    let views: Vec<Tensor> = inputs
        .iter()
        .map(|x| x.broadcast_to(out.dims()))
        .collect::<Result<_>>()?;
    let _w = out.buffer.write(op)?;
    let _r = read_guards(op, inputs, out)?;
    with_dtype!(dtype, T => {
        let operands: [Operand<'_, T>; 3] = std::array::from_fn(|i| {
            match (views.get(i), read.get(i)) {
                (Some(v), Some(true)) => Operand::Dense(v.typed_ptr::<T>()),
                (Some(v), _) => Operand::Strided(v.typed_ptr::<T>(), v.strides()),
                _ => Operand::Dense(std::ptr::null()),
            }
        });
        type D = ctensor_base::CpuDevice;
        let shape = out.dims();
        // SAFETY: `out` is dense row-major on the host with `shape`'s elements (of i32
        // for the mask kinds, T for the others); a dense operand is `out` or a dense
        // tensor of its shape in another buffer, a strided one a view of its own buffer
        // disjoint from `out` (the caller checks `shares_memory_with`); the guards
        // above exclude other access meanwhile; `kernel` gets each block's pointers.
        unsafe {
            if matches!(kind, Kind::Compare(_) | Kind::Classify(_)) {
                host_blocks(op, shape, operands, out.typed_ptr::<i32>(), |n, p, m| {
                    kernel::<T, D>(kind, n, p, std::ptr::null_mut(), m)
                })
            } else {
                host_blocks(op, shape, operands, out.typed_ptr::<T>(), |n, p, z| {
                    kernel::<T, D>(kind, n, p, z, std::ptr::null_mut())
                })
            }
        }
    })
    .map_err(|e| e.in_op(op))
}

/// Checks the operands, promotes them to their common type, allocates the broadcast
/// result and computes it.
fn compute(op: &'static str, kind: Kind, inputs: &[&Tensor]) -> Result<Tensor> {
    debug_assert_eq!(inputs.len(), kind.arity());
    if plain(inputs, inputs[0]) {
        let dtype = kind.out_dtype(inputs[0].dtype());
        // SAFETY: `out` is fresh, dense and row-major; the kernel writes every element;
        // it is dropped unread on error.
        let out = unsafe { Tensor::uninit(dtype, inputs[0].device(), inputs[0].dims())? };
        run_dense(op, kind, inputs, &out)?;
        return Ok(out);
    }
    let mut shape = inputs[0].dims().to_vec();
    for x in &inputs[1..] {
        check_device(op, inputs[0], x)?;
        shape = broadcast_shapes(op, &shape, x.dims())?;
    }
    // The operands are cast to their common type as the kernel reads them (by slabs of a
    // large output), not up front.
    let common =
        result_type_of(inputs.iter().map(|x| x.dtype())).ok_or_else(|| Error::Internal {
            op,
            what: "promotion of an empty operand list".into(),
        })?;
    let dtype = kind.out_dtype(common);
    // SAFETY: `out` is dense row-major and fresh, so `run_into` hands it to the kernel
    // as it is, which writes every element; it is dropped unread on error.
    let out = unsafe { Tensor::uninit(dtype, inputs[0].device(), &shape)? };
    run_into(
        Work {
            op,
            kind,
            dtype: common,
        },
        inputs,
        &out,
    )?;
    Ok(out)
}

/// Computes `kind` of `inputs` into the existing `out` (in place when `out` is the first
/// input): every operand must broadcast to `out`'s shape, and the operands' promoted type
/// must be storable in `out`'s ([`can_cast`](crate::can_cast)); the arithmetic is done
/// in `out`'s type.
fn compute_into(op: &'static str, kind: Kind, inputs: &[&Tensor], out: &Tensor) -> Result<()> {
    if plain(inputs, out)
        && out.is_contiguous()
        && inputs
            .iter()
            .all(|x| same_view(x, out) || !x.shares_memory_with(out))
    {
        return run_dense(op, kind, inputs, out);
    }
    for x in inputs {
        check_device(op, out, x)?;
        let shape = broadcast_shapes(op, out.dims(), x.dims())?;
        if shape != out.dims() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "an operand that broadcasts to the output's shape {:?}",
                    out.dims()
                ),
                got: vec![x.dims().to_vec()],
            });
        }
    }
    if let Some(t) = result_type_of(inputs.iter().map(|x| x.dtype())) {
        check_can_cast(op, t, out.dtype())?;
    }
    run_into(
        Work {
            op,
            kind,
            dtype: out.dtype(),
        },
        inputs,
        out,
    )
}

/// `kind` of `a` and `b` into `out`, whose shape must be their broadcast shape.
fn binary_into(op: &'static str, kind: Kind, a: &Tensor, b: &Tensor, out: &Tensor) -> Result<()> {
    let shape = broadcast_shapes(op, a.dims(), b.dims())?;
    if shape != out.dims() {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!("an output of the broadcast shape {shape:?}"),
            got: vec![out.dims().to_vec()],
        });
    }
    compute_into(op, kind, &[a, b], out)
}

/// Computes `kind` with `target` as the first operand and the output (in place).
fn compute_in_place(
    op: &'static str,
    kind: Kind,
    target: &Tensor,
    others: &[&Tensor],
) -> Result<()> {
    // At most three operands (`kind.arity()`): on the stack.
    let mut inputs = [target; 3];
    let n = others.len() + 1;
    inputs[1..n].copy_from_slice(others);
    compute_into(op, kind, &inputs[..n], target)
}

/// `x` cast to `dtype` (shared when it already has that type).
fn as_type(op: &'static str, x: &Tensor, dtype: DataType) -> Result<Tensor> {
    promote_to(op, &[x], dtype).map(|mut v| v.remove(0))
}

/// `x ∘ s` (`s ∘ x` when `number_first`) for a binary `kind`, with the number's weak
/// promotion ([`Number`]).
fn with_number(
    op: &'static str,
    kind: Kind,
    x: &Tensor,
    s: Number,
    number_first: bool,
) -> Result<Tensor> {
    let dtype = s.result_type_with(x.dtype());
    let x = as_type(op, x, dtype)?;
    let n = s.tensor(dtype, x.device()).map_err(|e| e.in_op(op))?;
    if number_first {
        compute(op, kind, &[&n, &x])
    } else {
        compute(op, kind, &[&x, &n])
    }
}

const ONE: c64 = c64::new(1.0, 0.0);

/// `x op y` as an `i32` mask (broadcasting, promoting), `op` naming it in errors.
pub(super) fn compare(op: &'static str, c: CmpOp, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    compute(op, Kind::Compare(c), &[x, y])
}

/// The element-wise maximum (`max`) or minimum of `x` and `y`.
pub(super) fn extreme(op: &'static str, max: bool, x: &Tensor, y: &Tensor) -> Result<Tensor> {
    compute(op, Kind::Extreme(max), &[x, y])
}

/// Whether each element of `x` is of class `c`, as an `i32` mask.
pub(super) fn classify(op: &'static str, c: Class, x: &Tensor) -> Result<Tensor> {
    compute(op, Kind::Classify(c), &[x])
}

/// `op(x)` through the engine: integers in `f64` when `op` does not take them.
pub(super) fn math(x: &Tensor, op: MathOp) -> Result<Tensor> {
    if x.dtype().is_integer() && !op.for_integers() {
        return compute(
            op.name(),
            Kind::Math(op),
            &[&as_type(op.name(), x, DataType::Double)?],
        );
    }
    compute(op.name(), Kind::Math(op), &[x])
}

/// `op(x)` into `out` (in place when `out` is `x`), computed in `out`'s type.
pub(super) fn math_into(x: &Tensor, op: MathOp, out: &Tensor) -> Result<()> {
    compute_into(op.name(), Kind::Math(op), &[x], out)
}

/// `op(x, y)` through the engine (broadcasting, promoting; integers in `f64` when `op`
/// does not take them).
pub(super) fn binary_math(x: &Tensor, y: &Tensor, op: BinaryMathOp) -> Result<Tensor> {
    let t = result_type_of([x.dtype(), y.dtype()]).unwrap_or(x.dtype());
    if t.is_integer() && !op.for_integers() {
        let (a, b) = (
            as_type(op.name(), x, DataType::Double)?,
            as_type(op.name(), y, DataType::Double)?,
        );
        return compute(op.name(), Kind::Binary(op), &[&a, &b]);
    }
    compute(op.name(), Kind::Binary(op), &[x, y])
}

/// `op(x, y)` into `out`, whose shape must be their broadcast shape (in `out`'s type).
pub(super) fn binary_math_into(
    x: &Tensor,
    y: &Tensor,
    op: BinaryMathOp,
    out: &Tensor,
) -> Result<()> {
    binary_into(op.name(), Kind::Binary(op), x, y, out)
}

/// `op(x, s)` (`op(s, x)` when `number_first`) with the number's weak promotion.
pub(super) fn binary_math_number(
    x: &Tensor,
    s: Number,
    op: BinaryMathOp,
    number_first: bool,
) -> Result<Tensor> {
    let dtype = s.result_type_with(x.dtype());
    if dtype.is_integer() && !op.for_integers() {
        let x = as_type(op.name(), x, DataType::Double)?;
        return with_number(op.name(), Kind::Binary(op), &x, s, number_first);
    }
    with_number(op.name(), Kind::Binary(op), x, s, number_first)
}

impl Tensor {
    /// `self + other`, broadcasting.
    pub fn add(&self, other: &Tensor) -> Result<Tensor> {
        compute("add", Kind::Add(ONE, ONE), &[self, other])
    }

    /// `self - other`, broadcasting.
    pub fn sub(&self, other: &Tensor) -> Result<Tensor> {
        compute("sub", Kind::Add(ONE, -ONE), &[self, other])
    }

    /// `self ∘ other` (element-wise product), broadcasting.
    pub fn mul(&self, other: &Tensor) -> Result<Tensor> {
        compute("mul", Kind::Mul(ONE), &[self, other])
    }

    /// `self / other`, broadcasting. Integer division truncates; an integer zero divisor
    /// is an error.
    pub fn div(&self, other: &Tensor) -> Result<Tensor> {
        compute("div", Kind::Div(ONE), &[self, other])
    }

    /// `alpha · self + beta · other`, broadcasting (scalars cast to the dtype).
    pub fn add_scaled(
        &self,
        alpha: impl Into<c64>,
        other: &Tensor,
        beta: impl Into<c64>,
    ) -> Result<Tensor> {
        compute(
            "add_scaled",
            Kind::Add(alpha.into(), beta.into()),
            &[self, other],
        )
    }

    /// `alpha · self ∘ y + beta · z`, broadcasting all three.
    pub fn fma(
        &self,
        y: &Tensor,
        z: &Tensor,
        alpha: impl Into<c64>,
        beta: impl Into<c64>,
    ) -> Result<Tensor> {
        compute("fma", Kind::Fma(alpha.into(), beta.into()), &[self, y, z])
    }

    /// `self + s` for every element. The number promotes weakly ([`Number`]): `f32 +
    /// 2.0` stays `f32`, `f32 + c64` is `c32`, `i32 + 0.5` is `f64`.
    pub fn add_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        with_number("add_scalar", Kind::Add(ONE, ONE), self, s.into(), false)
    }

    /// `self - s` for every element (weak promotion as in [`add_scalar`](Self::add_scalar)).
    pub fn sub_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        with_number("sub_scalar", Kind::Add(ONE, -ONE), self, s.into(), false)
    }

    /// `s - self` for every element (weak promotion as in [`add_scalar`](Self::add_scalar)).
    pub fn rsub_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        with_number("rsub_scalar", Kind::Add(ONE, -ONE), self, s.into(), true)
    }

    /// `s · self` (weak promotion as in [`add_scalar`](Self::add_scalar): a complex number
    /// times a real tensor is complex, never a silently dropped imaginary part).
    pub fn mul_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        let s = s.into();
        let dtype = s.result_type_with(self.dtype());
        s.check_fits("mul_scalar", dtype)?;
        let x = as_type("mul_scalar", self, dtype)?;
        compute("mul_scalar", Kind::Scale(s.to_c64()), &[&x])
    }

    /// `alpha · self` in `self`'s type, the coefficient cast to it (einsum's documented
    /// `alpha`: a real tensor takes the real part).
    pub(crate) fn scaled_in_type(&self, alpha: c64) -> Result<Tensor> {
        compute("scale", Kind::Scale(alpha), &[self])
    }

    /// `self := beta · self` in place, the coefficient cast to `self`'s type.
    pub(crate) fn scale_in_type_(&mut self, beta: c64) -> Result<()> {
        compute_in_place("scale_", Kind::Scale(beta), self, &[])
    }

    /// `self / s` for every element (integer division truncates; zero is an error; weak
    /// promotion as in [`add_scalar`](Self::add_scalar)).
    pub fn div_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        with_number("div_scalar", Kind::Div(ONE), self, s.into(), false)
    }

    /// `s / self` for every element (weak promotion as in [`add_scalar`](Self::add_scalar)).
    pub fn rdiv_scalar(&self, s: impl Into<Number>) -> Result<Tensor> {
        with_number("rdiv_scalar", Kind::Div(ONE), self, s.into(), true)
    }

    /// `-self` (wrapping for integers).
    pub fn neg(&self) -> Result<Tensor> {
        compute("neg", Kind::Math(MathOp::Neg), &[self])
    }

    /// `1` where the element equals `s` and `0` elsewhere, in the tensor's dtype; NaN
    /// equals nothing. The number is compared in the promoted type (an `i64` tensor has
    /// no element equal to `2.5`), as [`equal_scalar`](Self::equal_scalar), which this
    /// is with the mask cast to the tensor's dtype.
    #[deprecated(note = "use `equal_scalar` (an `i32` 0/1 mask; cast it if needed)")]
    pub fn eq_scalar(&self, s: impl Into<c64>) -> Result<Tensor> {
        let s: c64 = s.into();
        let n = if s.im == 0.0 {
            Number::from(s.re)
        } else {
            Number::from(s)
        };
        self.equal_scalar(n)?.cast(self.dtype())
    }

    /// Element-wise modulus; complex tensors give their real type (`c64` → `f64`).
    pub fn abs(&self) -> Result<Tensor> {
        let x = self.dense()?;
        let real: DataType = self.dtype().real_type();
        let out = Tensor::new(real, self.device(), self.dims())?;
        let _w = out.buffer.write("abs")?;
        let _r = x.buffer.read("abs")?;
        dispatch!(self.dtype(), self.device(), T, D => {
            // SAFETY: `x` is dense with `n` elements of T, `out` dense with `n` elements of
            // T's real type; they are different buffers and the guards hold them.
            unsafe {
                <D as Abs<T>>::abs(
                    x.numel(),
                    x.typed_ptr::<T>(),
                    out.typed_ptr::<<T as Scalar>::Real>(),
                )
            }
        })?;
        drop((_w, _r));
        Ok(out)
    }

    /// `out = self + other` into an existing tensor of the broadcast shape (any layout,
    /// e.g. a [`TensorMap`](crate::TensorMap)), without allocating a result. Computed in
    /// `out`'s type, which must hold the operands' promoted type ([`can_cast`](crate::can_cast)).
    pub fn add_into(&self, other: &Tensor, out: &mut Tensor) -> Result<()> {
        binary_into("add_into", Kind::Add(ONE, ONE), self, other, out)
    }

    /// `out = self - other`, as [`add_into`](Self::add_into).
    pub fn sub_into(&self, other: &Tensor, out: &mut Tensor) -> Result<()> {
        binary_into("sub_into", Kind::Add(ONE, -ONE), self, other, out)
    }

    /// `out = self ∘ other` (element-wise product), as [`add_into`](Self::add_into).
    pub fn mul_into(&self, other: &Tensor, out: &mut Tensor) -> Result<()> {
        binary_into("mul_into", Kind::Mul(ONE), self, other, out)
    }

    /// `out = self / other`, as [`add_into`](Self::add_into) (integer division truncates;
    /// by zero it is an error).
    pub fn div_into(&self, other: &Tensor, out: &mut Tensor) -> Result<()> {
        binary_into("div_into", Kind::Div(ONE), self, other, out)
    }

    /// `self += other` (broadcasting `other` to `self`'s shape), in place.
    pub fn add_(&mut self, other: &Tensor) -> Result<()> {
        compute_in_place("add_", Kind::Add(ONE, ONE), self, &[other])
    }

    /// `self -= other`, in place.
    pub fn sub_(&mut self, other: &Tensor) -> Result<()> {
        compute_in_place("sub_", Kind::Add(ONE, -ONE), self, &[other])
    }

    /// `self ∘= other`, in place.
    pub fn mul_(&mut self, other: &Tensor) -> Result<()> {
        compute_in_place("mul_", Kind::Mul(ONE), self, &[other])
    }

    /// `self /= other`, in place.
    pub fn div_(&mut self, other: &Tensor) -> Result<()> {
        compute_in_place("div_", Kind::Div(ONE), self, &[other])
    }

    /// `self := alpha · self + beta · other`, in place (an AXPBY).
    pub fn axpby_(
        &mut self,
        alpha: impl Into<c64>,
        other: &Tensor,
        beta: impl Into<c64>,
    ) -> Result<()> {
        compute_in_place(
            "axpby_",
            Kind::Add(alpha.into(), beta.into()),
            self,
            &[other],
        )
    }

    /// `self := s · self`, in place. A number of a higher kind than the tensor (complex
    /// for a real tensor, floating for an integer one) is [`Error::CannotCast`].
    pub fn scale_(&mut self, s: impl Into<Number>) -> Result<()> {
        let s = s.into();
        check_can_cast("scale_", s.result_type_with(self.dtype()), self.dtype())?;
        s.check_fits("scale_", self.dtype())?;
        compute_in_place("scale_", Kind::Scale(s.to_c64()), self, &[])
    }
}
