//! Helpers shared by the tensor tests.
#![allow(dead_code)]

use ctensor_aten::{c64, CastFrom, Scalar, Tensor};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// Random values exactly representable in `T` (multiples of 1/8 below 128 for floats,
/// so f16 is exact too; integers for integer types).
pub fn random_vec<T: Scalar>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| {
            let scale = if T::DTYPE.is_integer() { 1.0 } else { 8.0 };
            let re = rng.gen_range(-1000i32..1000) as f64 / scale;
            let im = rng.gen_range(-1000i32..1000) as f64 / scale;
            T::cast_from(c64::new(re, im))
        })
        .collect()
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

pub fn cast<D: CastFrom<S>, S>(x: S) -> D {
    D::cast_from(x)
}

#[macro_export]
macro_rules! for_all_dtypes {
    ($f:ident) => {{
        $f::<f32>();
        $f::<f64>();
        $f::<i32>();
        $f::<i64>();
        $f::<ctensor_aten::c32>();
        $f::<ctensor_aten::c64>();
        $f::<ctensor_aten::f16>();
        $f::<ctensor_aten::bf16>();
    }};
}
