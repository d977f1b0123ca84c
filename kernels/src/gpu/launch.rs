//! Launch helpers: grid sizes, argument lists, strided-view descriptors, temporaries.

use std::ffi::c_void;

use ctensor_base::alloc::Allocation;
use ctensor_base::gpu::GpuContext;
use ctensor_base::{DeviceType, Error, Result, Scalar};
use cudarc::driver::sys::CUfunction;

use crate::strides::row_major_strides;

/// Threads per block of the one-dimensional kernels.
pub const BLOCK: u32 = 256;
/// The most blocks a one-dimensional launch uses; the grid-stride loops cover the rest.
pub const MAX_GRID: usize = 65_535;

/// A kernel argument list: pointers to each argument's value.
macro_rules! args {
    ($($x:expr),* $(,)?) => {
        [$( ($x) as *const _ as *mut std::ffi::c_void ),*]
    };
}
pub(crate) use args;

/// Launches a grid-stride kernel over `n` elements (nothing for `n == 0`).
///
/// # Safety
/// `args` match the kernel's parameters; every device pointer among them is valid for
/// what the kernel does over `n` elements.
pub(crate) unsafe fn launch_1d(
    (ctx, f): (&GpuContext, CUfunction),
    n: usize,
    args: &mut [*mut c_void],
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    // SAFETY: the caller's contract.
    unsafe { ctx.launch(f, (grid_1d(n), 1, 1), (BLOCK, 1, 1), 0, args) }
}

/// The blocks of a one-dimensional launch over `n` elements: one per [`BLOCK`] elements,
/// at least one, at most [`MAX_GRID`] (the grid-stride loops cover the rest).
pub fn grid_1d(n: usize) -> u32 {
    n.div_ceil(BLOCK as usize).clamp(1, MAX_GRID) as u32
}

/// The blocks of a row reduction (`reduce_sum`, `reduce_extreme`): one per row, at most
/// [`MAX_GRID`] (rows walked grid-stride), each of [`BLOCK`] threads.
pub fn reduce_grid(rows: usize) -> u32 {
    rows.clamp(1, MAX_GRID) as u32
}

/// How the GPU carries out a transpose (`Transpose::transpose`).
#[derive(Clone, Debug)]
pub enum TransposePlan {
    /// A plain matrix transpose after merging axes: the tiled `transpose2d` kernel on a
    /// `rows × cols` row-major source, with this grid and block.
    Tiled {
        /// Rows of the source.
        rows: u64,
        /// Columns of the source.
        cols: u64,
        /// Blocks: 32-wide tiles of columns, then of rows, each clamped at [`MAX_GRID`].
        grid: (u32, u32, u32),
        /// Threads per block.
        block: (u32, u32, u32),
    },
    /// Anything else: the strided copy over the output's shape, destination strides
    /// row-major, source strides permuted.
    Strided(Box<Dims>),
}

/// The plan for transposing a row-major `shape` by `perm` (the output's axis `k` is the
/// input's axis `perm[k]`).
pub fn transpose_plan(op: &'static str, shape: &[usize], perm: &[usize]) -> Result<TransposePlan> {
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let in_strides = row_major_strides(shape);
    let src_strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let dims = Dims::new(op, &out_shape, &row_major_strides(&out_shape), &src_strides)?;
    let axes: Vec<(u64, u64, u64)> = dims.axes().collect();
    // Out [r, c] with source strides [1, r]: the source is c × r, row-major.
    if let [(r, a0, b0), (c, a1, b1)] = axes[..] {
        if a1 == 1 && a0 == c && b0 == 1 && b1 == r {
            let tiles = |x: u64| x.div_ceil(32).clamp(1, MAX_GRID as u64) as u32;
            return Ok(TransposePlan::Tiled {
                rows: c,
                cols: r,
                grid: (tiles(r), tiles(c), 1),
                block: (32, 8, 1),
            });
        }
    }
    Ok(TransposePlan::Strided(Box::new(dims)))
}

/// A device pointer as the 64-bit value a kernel parameter holds.
#[inline]
pub(crate) fn dev<T>(p: *const T) -> u64 {
    p as u64
}

/// Most axes a strided kernel takes after merging (`CT_MAX_RANK` in prelude.cu).
pub(crate) const MAX_RANK: usize = 16;

/// Two strided views over one shape, passed to kernels by value (`CtDims`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    rank: i32,
    shape: [u64; MAX_RANK],
    a: [u64; MAX_RANK],
    b: [u64; MAX_RANK],
}

impl Dims {
    /// The descriptor of views `a` and `b` over `shape`: size-1 axes dropped, and
    /// neighbouring axes merged where both views are dense across them. More than
    /// [`MAX_RANK`] axes left after that is an error.
    pub fn new(op: &'static str, shape: &[usize], a: &[usize], b: &[usize]) -> Result<Dims> {
        let mut axes: Vec<(usize, usize, usize)> = Vec::with_capacity(shape.len());
        for k in 0..shape.len() {
            if shape[k] == 1 {
                continue;
            }
            match axes.last_mut() {
                Some(last) if last.1 == a[k] * shape[k] && last.2 == b[k] * shape[k] => {
                    last.0 *= shape[k];
                    last.1 = a[k];
                    last.2 = b[k];
                }
                _ => axes.push((shape[k], a[k], b[k])),
            }
        }
        if axes.len() > MAX_RANK {
            return Err(Error::Unsupported {
                op,
                what: format!(
                    "shape {shape:?} with strides {a:?} and {b:?} on the GPU (at most {MAX_RANK} \
                     axes after merging dense ones)"
                ),
            });
        }
        let mut d = Dims {
            rank: axes.len() as i32,
            shape: [1; MAX_RANK],
            a: [0; MAX_RANK],
            b: [0; MAX_RANK],
        };
        for (k, &(n, sa, sb)) in axes.iter().enumerate() {
            d.shape[k] = n as u64;
            d.a[k] = sa as u64;
            d.b[k] = sb as u64;
        }
        Ok(d)
    }

    /// The bytes a kernel receives (`CtDims` in prelude.cu).
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `Dims` is plain `repr(C)` data (an i32, 4 bytes of padding, u64 arrays);
        // the padding is only read as bytes, never interpreted.
        unsafe {
            std::slice::from_raw_parts(
                (self as *const Dims).cast::<u8>(),
                std::mem::size_of::<Dims>(),
            )
        }
    }

    /// The axes left: (length, stride in a, stride in b).
    pub(crate) fn axes(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        (0..self.rank as usize).map(|k| (self.shape[k], self.a[k], self.b[k]))
    }
}

/// The bytes of `n` elements of `T`, or `Error::Overflow`.
pub(crate) fn bytes_of<T: Scalar>(op: &'static str, n: usize) -> Result<usize> {
    n.checked_mul(std::mem::size_of::<T>())
        .ok_or_else(|| Error::Overflow {
            op,
            what: format!("{n} elements of {} do not fit in usize bytes", T::DTYPE),
        })
}

/// A temporary device array of `n` elements of `T`, freed (stream-ordered) on drop.
pub(crate) struct Scratch<T> {
    alloc: Allocation,
    _t: std::marker::PhantomData<T>,
}

impl<T: Scalar> Scratch<T> {
    pub(crate) fn new(op: &'static str, n: usize) -> Result<Scratch<T>> {
        let bytes = n
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::Overflow {
                op,
                what: format!("{n} elements of {}", T::DTYPE),
            })?;
        Ok(Scratch {
            alloc: Allocation::zeroed(DeviceType::Gpu, bytes)?,
            _t: std::marker::PhantomData,
        })
    }

    pub(crate) fn ptr(&self) -> *mut T {
        self.alloc.as_ptr() as *mut T
    }
}

/// A device copy of `src[..n]`, for kernels that cannot run in place.
///
/// # Safety
/// `src` is device memory valid for reads of `n` elements.
pub(crate) unsafe fn copy_of<T: Scalar>(
    op: &'static str,
    src: *const T,
    n: usize,
) -> Result<Scratch<T>> {
    let tmp = Scratch::<T>::new(op, n)?;
    // SAFETY: both are device buffers of `n` elements (caller; just allocated).
    unsafe {
        ctensor_base::gpu::copy_d2d(tmp.ptr() as u64, src as u64, n * std::mem::size_of::<T>())?
    };
    Ok(tmp)
}

/// `true` when the byte ranges `[a, a + na)` and `[b, b + nb)` overlap.
pub(crate) fn overlaps<T>(a: *const T, na: usize, b: *const T, nb: usize) -> bool {
    let s = std::mem::size_of::<T>();
    let (a, b) = (a as usize, b as usize);
    na > 0 && nb > 0 && a < b + nb * s && b < a + na * s
}

/// A device copy of `src` when it is `dst` (in place), for kernels that must read one
/// buffer and write another; `None` when they already differ.
///
/// # Safety
/// `src` is device memory valid for reads of `n` elements.
pub(super) unsafe fn unaliased<T: Scalar>(
    op: &'static str,
    src: *const T,
    dst: *mut T,
    n: usize,
) -> Result<Option<Scratch<T>>> {
    if std::ptr::eq(src, dst) {
        // SAFETY: the caller's contract.
        Ok(Some(unsafe { copy_of(op, src, n)? }))
    } else {
        Ok(None)
    }
}
