//! Two handles of one memory: two `TensorMap`s over the same array (as two NumPy or
//! DLPack imports of one array are). Every op that writes into an existing tensor must
//! see that the source overlaps the destination by address, not only by buffer, and read
//! the source before it writes, giving what it gives for two views of one buffer.

mod common;

use common::*;
use ctensor_aten::{
    c32, einsum_into, matmul_into, DataType, Device, EinsumOptions, Result, Scalar, Tensor,
    TensorMap, Trans,
};

/// A row-major map of `shape` over the whole of `owner`'s memory (which must hold at
/// least that many elements), keeping `owner` alive.
fn map_of(owner: &Tensor, shape: &[usize]) -> Result<TensorMap> {
    let strides = ctensor_aten::Order::RowMajor.strides(shape);
    let keep: std::sync::Arc<dyn std::any::Any + Send + Sync> = std::sync::Arc::new(owner.share());
    // SAFETY: `owner` holds `numel(shape)` elements of its dtype on its device (the
    // callers' shapes match it) and the map keeps that memory alive; the tests use the
    // maps on one thread.
    unsafe {
        TensorMap::from_raw(
            owner.data_ptr(),
            owner.dtype(),
            owner.device(),
            shape,
            &strides,
            Some(keep),
        )
    }
}

/// An `n × n` row-major host matrix of `T` holding `0, 1, 2, ...` and its values.
fn counting<T: Scalar>(n: usize) -> Result<(Tensor, Vec<c32>)> {
    let v: Vec<c32> = (0..n * n)
        .map(|k| c32::new(k as f32, (k % 3) as f32))
        .collect();
    let t = Tensor::from_slice(&v, &[n, n])?.cast(T::DTYPE)?;
    let v = t.cast(DataType::ComplexFloat)?.to_vec::<c32>()?;
    Ok((t, v))
}

fn values(t: &Tensor) -> Result<Vec<c32>> {
    t.to_device(ctensor_aten::DeviceType::Cpu)?
        .cast(DataType::ComplexFloat)?
        .contiguous()?
        .to_vec::<c32>()
}

/// `dst[1:, 1:] = f(src[:-1, :-1])` through two maps of one `n × n` array, against the
/// same computed on a plain copy.
fn shifted_block<D: Device, T: Scalar>(
    what: &str,
    n: usize,
    f: impl Fn(&mut Tensor, &Tensor) -> Result<()>,
    want: impl Fn(c32, c32) -> c32,
) -> Result<()> {
    let (host, v) = counting::<T>(n)?;
    let owner = on::<D>(host);
    let (a, b) = (map_of(&owner, &[n, n])?, map_of(&owner, &[n, n])?);
    assert!(
        !std::sync::Arc::ptr_eq(a.buffer(), b.buffer()),
        "two buffers"
    );
    let mut dst = a.narrow(0, 1, n - 1)?.narrow(1, 1, n - 1)?;
    let src = b.narrow(0, 0, n - 1)?.narrow(1, 0, n - 1)?;
    assert!(
        dst.shares_memory_with(&src) && src.shares_memory_with(&dst),
        "{what}"
    );
    f(&mut dst, &src)?;
    let got = values(&owner)?;
    for i in 0..n {
        for j in 0..n {
            let w = if i > 0 && j > 0 {
                want(v[i * n + j], v[(i - 1) * n + j - 1])
            } else {
                v[i * n + j]
            };
            assert_eq!(
                got[i * n + j],
                w,
                "{what}, {T:?} {n}×{n}, element ({i}, {j})",
                T = T::DTYPE
            );
        }
    }
    Ok(())
}

fn every_writing_op<D: Device, T: Scalar>(n: usize) -> Result<()> {
    shifted_block::<D, T>("assign", n, |d, s| d.assign(s), |_, s| s)?;
    shifted_block::<D, T>("sync", n, |d, s| d.sync(s), |_, s| s)?;
    shifted_block::<D, T>("add_", n, |d, s| d.add_(s), |d, s| d + s)?;
    shifted_block::<D, T>(
        "sub_into",
        n,
        |d, s| s.sub_into(&d.share(), d),
        |d, s| s - d,
    )?;
    shifted_block::<D, T>("mul_into", n, |d, s| s.mul_into(s, d), |_, s| s * s)?;
    shifted_block::<D, T>(
        "index_copy_",
        n,
        |d, s| {
            let idx = Tensor::from_slice(&(0..n as i64 - 1).collect::<Vec<_>>(), &[n - 1])?;
            d.index_copy_(0, &on::<D>(idx), s)
        },
        |_, s| s,
    )?;
    Ok(())
}

device_test!(writes_through_one_map_read_the_other_before_writing, D -> Result {
    for n in [3, 6, 17] {
        every_writing_op::<D, f64>(n)?;
        every_writing_op::<D, c32>(n)?;
        every_writing_op::<D, i32>(n)?;
    }
    Ok(())
});

device_test!(products_into_a_map_of_an_operands_memory_read_it_first, D -> Result {
    let n = 7;
    let (host, _) = counting::<f64>(n)?;
    let owner = on::<D>(host);
    let want = matmul_into_fresh(&owner)?;
    // out = a · a, with out a second map of a's memory.
    let a = map_of(&owner, &[n, n])?;
    let mut out = map_of(&owner, &[n, n])?;
    matmul_into(&a, Trans::N, &a, Trans::N, 1.0, 0.0, &mut out)?;
    assert_eq!(values(&owner)?, want, "matmul_into");
    let (host, _) = counting::<f64>(n)?;
    let owner = on::<D>(host);
    let a = map_of(&owner, &[n, n])?;
    let mut out = map_of(&owner, &[n, n])?;
    einsum_into("ij,jk->ik", &[&a, &a], &EinsumOptions::default(), &mut out)?;
    assert_eq!(values(&owner)?, want, "einsum_into");
    Ok(())
});

fn matmul_into_fresh(a: &Tensor) -> Result<Vec<c32>> {
    values(&ctensor_aten::matmul(a, a)?)
}

device_test!(maps_of_disjoint_or_interleaved_parts_do_not_share, D -> Result {
    let owner = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[6, 6])?);
    let (a, b) = (map_of(&owner, &[6, 6])?, map_of(&owner, &[6, 6])?);
    // Rows 0-2 and rows 3-5: disjoint address ranges.
    assert!(!a.narrow(0, 0, 3)?.shares_memory_with(&b.narrow(0, 3, 3)?));
    // Rows 2-3 and rows 3-5 overlap in row 3.
    assert!(a.narrow(0, 2, 2)?.shares_memory_with(&b.narrow(0, 3, 3)?));
    // An empty view touches nothing; the whole array overlaps every row.
    assert!(!a.narrow(0, 2, 0)?.shares_memory_with(&b.share()));
    assert!(a.narrow(1, 5, 1)?.shares_memory_with(&b.narrow(0, 5, 1)?));
    // A copy is its own memory.
    assert!(!a.try_clone()?.shares_memory_with(&b));
    Ok(())
});

#[test]
fn a_map_whose_span_wraps_the_address_space_is_refused() {
    // Two f64 from 8 bytes below the top of the address space: 16 bytes wrap past zero.
    let top = (usize::MAX - 7) as *mut std::ffi::c_void;
    // SAFETY: refused before the pointer is used (the span check).
    let got = unsafe {
        TensorMap::from_raw(
            top,
            DataType::Double,
            ctensor_aten::DeviceType::Cpu,
            &[2],
            &[1],
            None,
        )
    };
    match got {
        Err(ctensor_aten::Error::Overflow { what, .. }) => assert!(what.contains("wrap"), "{what}"),
        other => panic!(
            "expected Overflow, got {:?}",
            other.map(|m| m.dims().to_vec())
        ),
    }
    // One element 16 bytes below the top ends below it: one past its end is an address.
    let below = (usize::MAX - 15) as *mut std::ffi::c_void;
    // SAFETY: the map is made and dropped without reading or writing its memory.
    let one = unsafe {
        TensorMap::from_raw(
            below,
            DataType::Double,
            ctensor_aten::DeviceType::Cpu,
            &[1],
            &[1],
            None,
        )
    };
    assert!(one.is_ok(), "{:?}", one.err());
}
