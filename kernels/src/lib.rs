//! # ctensor-kernels
//!
//! Kernels on raw memory: one trait per kernel, generic over the element type, and
//! implemented by each device marker ([`CpuDevice`](ctensor_base::CpuDevice), later
//! [`GpuDevice`](ctensor_base::GpuDevice)). Kernels never see a tensor, so they serve
//! tensors, maps over foreign arrays and plain pointers alike. Each validates what it
//! can and returns [`Result`](ctensor_base::Result).
//!
//! Families: [`memory`] (set, copy, strided copy, cast), [`blas`] (dot, nrm2, scal,
//! axpy, copy, gemv, gemm and batched forms, [`MatMul`](blas::matmul::MatMul)),
//! [`lapack`] (Cholesky, triangular inverse, Hermitian eigensolvers, LU, QR, SVD),
//! [`elementwise`] (arithmetic, mathematical functions, comparisons), [`permute`]
//! (transpose, stride/inflate), [`reduce`] (row sums, extremes, running sums), [`fft`]
//! (complex FFTs along an axis), [`random`], [`select`]. Their flags ([`Trans`](flags::Trans),
//! [`Uplo`](flags::Uplo), …) are in [`flags`]; the argument checks all share are in [`args`],
//! index arithmetic in [`strides`]. `cpu/` and `gpu/` implement each family in a file of
//! the same name. Host work splits across threads above
//! [`parallel::parallel_threshold`].
//!
//! Solver code is written once, generic over the element type and the device:
//!
//! ```
//! use ctensor_base::{CpuDevice, Result, Scalar};
//! use ctensor_kernels::blas::{BlasGemm, Trans};
//! use ctensor_kernels::lapack::{Jobz, LapackHeevd, Uplo};
//!
//! /// Eigenvalues of the Gram matrix Sᴴ S of the m × n column-major `s` (host memory).
//! fn gram_spectrum<T: Scalar, D: BlasGemm<T> + LapackHeevd<T>>(
//!     s: &[T],
//!     m: usize,
//!     n: usize,
//! ) -> Result<Vec<T::Real>> {
//!     let mut g = vec![T::zero(); n * n];
//!     let mut w = vec![<T::Real as Scalar>::zero(); n];
//!     // SAFETY: `s` holds m·n elements, `g` n·n and `w` n, all distinct.
//!     unsafe {
//!         D::gemm(Trans::C, Trans::N, n, n, m, T::one(), s.as_ptr(), m, s.as_ptr(), m,
//!                 T::zero(), g.as_mut_ptr(), n)?;
//!         D::heevd(Jobz::ValuesOnly, Uplo::Lower, n, g.as_mut_ptr(), n, w.as_mut_ptr())?;
//!     }
//!     Ok(w)
//! }
//!
//! // S = [[1, 0], [0, 2], [0, 0]] (3 × 2): Sᵀ S = diag(1, 4).
//! let s = [1.0f64, 0.0, 0.0, 0.0, 2.0, 0.0];
//! let w = gram_spectrum::<f64, CpuDevice>(&s, 3, 2).unwrap();
//! assert!((w[0] - 1.0).abs() < 1e-12 && (w[1] - 4.0).abs() < 1e-12);
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod args;
pub mod blas;
mod cpu;
pub mod elementwise;
pub mod fft;
pub mod flags;
#[cfg(feature = "cuda")]
pub mod gpu;
pub mod lapack;
pub mod memory;
pub mod openblas;
pub mod parallel;
pub mod permute;
pub mod random;
pub mod reduce;
pub mod select;
pub mod sphere_fft;
pub mod strides;

// The former paths of moved modules, kept for one release.
pub use args as check;
pub use elementwise::{arith, compare, math};
pub use lapack::{qr, svd};
pub use strides as layout;

/// The former home of the element-wise, layout and reduction kernels and of [`MatMul`],
/// kept for one release: they now live in [`elementwise`], [`permute`], [`reduce`] and
/// [`blas::matmul`].
///
/// [`MatMul`]: blas::matmul::MatMul
pub mod linalg {
    pub use crate::blas::matmul::MatMul;
    #[allow(deprecated)]
    pub use crate::elementwise::Unary;
    pub use crate::elementwise::{Abs, Add, Conj, Div, EqScalar, Fma, Mul, UnaryOp};
    pub use crate::permute::{Inflate, Stride, Transpose};
    pub use crate::reduce::{ArgExtreme, CumSum, Reduce, ReduceExtreme};
}
