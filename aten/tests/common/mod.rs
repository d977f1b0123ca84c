//! Helpers shared by the tensor tests: the kernel tests' seeded random data and dtype
//! loop, plus index arithmetic for checking views.
#![allow(dead_code)]

#[path = "../../../kernels/tests/common/mod.rs"]
mod kernel_common;

#[allow(unused_imports)] // not every test file uses both
pub use kernel_common::{random_vec, rng, skip_gpu, special_value_operands, Outcome, TestResult};

use ctensor_aten::{Scalar, Tensor};
use rand::rngs::StdRng;

/// `t` moved to device `D` (the host data a test builds goes where the case runs).
pub fn on<D: ctensor_aten::Device>(t: Tensor) -> Tensor {
    t.to_device(D::TYPE).unwrap()
}

/// [`random_tensor`] on device `D`.
pub fn random_on<D: ctensor_aten::Device, T: Scalar>(
    rng: &mut StdRng,
    shape: &[usize],
) -> (Tensor, Vec<T>) {
    let (t, v) = random_tensor::<T>(rng, shape);
    (on::<D>(t), v)
}

/// A column-major map of `shape` over a device-`D` copy of `data`: a stand-in for a
/// caller's Fortran array on that device. The map keeps the copy alive; the returned
/// tensor shares it, to read what was written through the map.
pub fn fortran_map<D: ctensor_aten::Device, T: Scalar>(
    data: &[T],
    shape: &[usize],
) -> (Tensor, ctensor_aten::TensorMap) {
    let owner = on::<D>(Tensor::from_slice(data, &[data.len()]).unwrap());
    let strides = ctensor_aten::Order::ColMajor.strides(shape);
    let keep: std::sync::Arc<dyn std::any::Any + Send + Sync> = std::sync::Arc::new(owner.share());
    // SAFETY: `owner` holds `data.len()` elements of T on D, at least the span of
    // `shape` (the callers' data matches it), and the map keeps that memory alive.
    let map = unsafe {
        ctensor_aten::TensorMap::from_raw(
            owner.data_ptr(),
            T::DTYPE,
            D::TYPE,
            shape,
            &strides,
            Some(keep),
        )
    }
    .unwrap();
    (owner, map)
}

/// A column-major copy of `t` with the same elements: the transpose made row-major,
/// transposed back.
pub fn column_major(t: &Tensor) -> Tensor {
    let perm: Vec<usize> = (0..t.ndim()).rev().collect();
    t.permute(&perm)
        .unwrap()
        .contiguous()
        .unwrap()
        .permute(&perm)
        .unwrap()
}

pub fn random_tensor<T: Scalar>(rng: &mut StdRng, shape: &[usize]) -> (Tensor, Vec<T>) {
    let v = random_vec::<T>(rng, shape.iter().product());
    (Tensor::from_slice(&v, shape).unwrap(), v)
}

/// Row-major flat index of a multi-index.
pub fn flat(shape: &[usize], idx: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Every multi-index of `shape` in row-major order.
pub fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut f| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = f % shape[d];
                f /= shape[d];
            }
            idx
        })
        .collect()
}

/// Every CPU eigensolver backend of `eigh`, the per-call choice `Auto` (the default)
/// included.
pub const BACKENDS: [ctensor_aten::EigBackend; 4] = [
    ctensor_aten::EigBackend::Auto,
    ctensor_aten::EigBackend::LapackEvd,
    ctensor_aten::EigBackend::LapackEvr,
    ctensor_aten::EigBackend::Faer,
];

/// The unit roundoff of a floating dtype's real type.
pub fn eps(dt: ctensor_aten::DataType) -> f64 {
    match dt {
        ctensor_aten::DataType::Float | ctensor_aten::DataType::ComplexFloat => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}
