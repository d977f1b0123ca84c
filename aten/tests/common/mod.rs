//! Helpers shared by the tensor tests: the kernel tests' seeded random data and dtype
//! loop, plus index arithmetic for checking views.
#![allow(dead_code)]

#[path = "../../../kernels/tests/common/mod.rs"]
mod kernel_common;

pub use kernel_common::{random_vec, rng};

use ctensor_aten::{Scalar, Tensor};
use rand::rngs::StdRng;

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
