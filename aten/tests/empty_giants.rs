//! Sizes a scientific code must never die on: lengths that cannot be held are errors
//! (not an abort from an infallible allocation, nor a capacity-overflow panic), and
//! empty tensors with huge other dimensions are answered without a per-element or
//! per-matrix loop. Validation does not depend on the batch being non-empty.

mod common;

use common::*;
use ctensor_aten::{
    eigh, eigh_generalized, eigvalsh, fftfreq, irfftn, qr, qr_r, rfftfreq, DataType, Device,
    DeviceType, EigBackend, EighRange, Error, FftNorm, QrMode, Result, Tensor,
};

const HUGE: usize = 1 << 40;

/// `Overflow`, or the allocator's refusal: either is an answer, a crash is not.
fn refused(what: &str, r: Result<Tensor>) {
    match r {
        Err(Error::Overflow { .. } | Error::Alloc { .. }) => {}
        Err(e) => panic!("{what}: expected an overflow or allocation error, got {e}"),
        Ok(t) => panic!("{what}: expected an error, got shape {:?}", t.dims()),
    }
}

device_test!(frequency_vectors_too_long_to_hold_are_errors, D -> Result {
    refused("fftfreq(2^40)", fftfreq(HUGE, 1.0, D::TYPE));
    refused("fftfreq(usize::MAX / 4)", fftfreq(usize::MAX / 4, 1.0, D::TYPE));
    refused("rfftfreq(usize::MAX)", rfftfreq(usize::MAX, 1.0, D::TYPE));
    refused("arange(0, 2^62)", Tensor::arange(DataType::Double, D::TYPE, 0.0, 2f64.powi(62), 1.0));
    // Sizes that fit still give NumPy's values.
    let f = fftfreq(5, 0.5, D::TYPE)?.to_vec::<f64>()?;
    assert_eq!(f, [0.0, 0.4, 0.8, -0.8, -0.4]);
    let f = rfftfreq(6, 1.0, D::TYPE)?.to_vec::<f64>()?;
    assert_eq!(f, [0.0, 1.0 / 6.0, 2.0 / 6.0, 0.5]);
    assert_eq!(fftfreq(0, 1.0, D::TYPE)?.dims(), [0]);
    Ok(())
});

device_test!(irfftn_of_an_empty_batch_with_a_huge_output_length_is_empty, D -> Result {
    let x = on::<D>(Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[0, 3])?);
    for n in [HUGE, usize::MAX] {
        let y = irfftn(&x, &[1], Some(n), FftNorm::Backward)?;
        assert_eq!(y.dims(), [0, n]);
        assert_eq!(y.dtype(), DataType::Double);
    }
    // A non-empty batch with an output it cannot hold is an error, not an abort.
    let x = on::<D>(Tensor::zeros(DataType::ComplexFloat, DeviceType::Cpu, &[2, 3])?);
    refused("irfftn n = 2^40", irfftn(&x, &[1], Some(HUGE), FftNorm::Backward));
    refused("irfftn n = usize::MAX", irfftn(&x, &[1], Some(usize::MAX), FftNorm::Backward));
    // The default output length 2·(m − 1) of an empty input with a huge last axis does
    // not fit in usize: an Overflow, not a wrapped length.
    let x = on::<D>(Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[0, usize::MAX])?);
    refused("irfftn of m = usize::MAX", irfftn(&x, &[1], None, FftNorm::Backward));
    Ok(())
});

device_test!(stacks_of_empty_matrices_with_a_huge_batch_give_empty_results, D -> Result {
    for dtype in [DataType::Float, DataType::ComplexDouble] {
        let a = on::<D>(Tensor::zeros(dtype, DeviceType::Cpu, &[HUGE, 0, 0])?);
        let (w, v) = eigh(&a, EighRange::All, EigBackend::Auto)?;
        assert_eq!((w.dims(), v.dims()), (&[HUGE, 0][..], &[HUGE, 0, 0][..]));
        assert_eq!(w.dtype(), dtype.real_type());
        assert_eq!(eigvalsh(&a, EighRange::Index(0, 0), EigBackend::LapackEvr)?.dims(), [HUGE, 0]);
        let (w, v) = eigh_generalized(&a, &a, 1, EighRange::All)?;
        assert_eq!((w.dims(), v.dims()), (&[HUGE, 0][..], &[HUGE, 0, 0][..]));
        // A batch of 2^40 with 2^40 on another axis too: the batch count overflows.
        let b = on::<D>(Tensor::zeros(dtype, DeviceType::Cpu, &[HUGE, HUGE, 0, 0])?);
        assert_eq!(eigh(&b, EighRange::All, EigBackend::Auto)?.1.dims(), [HUGE, HUGE, 0, 0]);

        let a = on::<D>(Tensor::zeros(dtype, DeviceType::Cpu, &[HUGE, 0, 3])?);
        let (q, r) = qr(&a, QrMode::Reduced)?;
        assert_eq!((q.dims(), r.dims()), (&[HUGE, 0, 0][..], &[HUGE, 0, 3][..]));
        assert_eq!(qr_r(&a)?.dims(), [HUGE, 0, 3]);
        let (q, r) = qr(&a, QrMode::Complete)?;
        assert_eq!((q.dims(), r.dims()), (&[HUGE, 0, 0][..], &[HUGE, 0, 3][..]));
        // m × 0 in complete mode: Q is the identity of each block (NumPy), R empty.
        let a = on::<D>(Tensor::zeros(dtype, DeviceType::Cpu, &[2, 3, 0])?);
        let (q, r) = qr(&a, QrMode::Complete)?;
        assert_eq!(r.dims(), [2, 3, 0]);
        let eye = Tensor::eye(dtype, DeviceType::Cpu, 3)?;
        for k in 0..2 {
            assert!(q.index(k)?.to_device(DeviceType::Cpu)?.allclose(&eye, 0.0, 0.0)?);
        }
    }
    // Integer matrices are refused, empty or not.
    let a = on::<D>(Tensor::zeros(DataType::Int, DeviceType::Cpu, &[HUGE, 0, 0])?);
    assert!(matches!(eigh(&a, EighRange::All, EigBackend::Auto), Err(Error::UnsupportedDType { .. })));
    assert!(matches!(qr(&a, QrMode::Reduced), Err(Error::UnsupportedDType { .. })));
    Ok(())
});

device_test!(an_invalid_index_range_is_refused_for_empty_and_full_stacks_alike, D -> Result {
    for batch in [0, 2] {
        let a = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[batch, 3, 3])?);
        for range in [EighRange::Index(0, 4), EighRange::Index(2, 1)] {
            let got = eigh(&a, range, EigBackend::Auto);
            assert!(matches!(got, Err(Error::OutOfRange { op: "eigh", .. })), "batch {batch}, {range:?}: {got:?}");
            let got = eigvalsh(&a, range, EigBackend::LapackEvr);
            assert!(matches!(got, Err(Error::OutOfRange { op: "eigvalsh", .. })), "batch {batch}, {range:?}: {got:?}");
            let got = eigh_generalized(&a, &a, 1, range);
            assert!(matches!(got, Err(Error::OutOfRange { op: "eigh_generalized", .. })), "batch {batch}, {range:?}: {got:?}");
        }
        // B of the wrong shape, non-square stacks, mixed dtypes: refused even when empty.
        let b = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 4])?);
        assert!(matches!(eigh_generalized(&a, &b, 1, EighRange::All), Err(Error::ShapeMismatch { .. })));
        let b = on::<D>(Tensor::zeros(DataType::Float, DeviceType::Cpu, &[3, 3])?);
        assert!(matches!(eigh_generalized(&a, &b, 1, EighRange::All), Err(Error::DTypeMismatch { .. })));
        let r = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[batch, 3, 2])?);
        assert!(matches!(eigh(&r, EighRange::All, EigBackend::Auto), Err(Error::NotAMatrix { .. })));
    }
    // A valid index range on an empty stack is an empty result of its count.
    let a = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0, 3, 3])?);
    let (w, v) = eigh(&a, EighRange::Index(1, 3), EigBackend::Auto)?;
    assert_eq!((w.dims(), v.dims()), (&[0, 2][..], &[0, 3, 2][..]));
    Ok(())
});

device_test!(splitting_into_more_views_than_can_be_held_is_an_overflow, D -> Result {
    let t = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[HUGE, 0])?);
    assert!(matches!(t.split(1, 0), Err(Error::Overflow { op: "split", .. })));
    assert!(matches!(t.chunk(HUGE, 0), Err(Error::Overflow { op: "chunk", .. })));
    // Along the empty axis there are no pieces at all.
    assert!(t.split(1, 1)?.is_empty());
    let pieces = t.split(HUGE / 2, 0)?;
    assert_eq!(pieces.iter().map(|p| p.dims()[0]).collect::<Vec<_>>(), [HUGE / 2, HUGE / 2]);
    Ok(())
});

device_test!(element_wise_ops_on_empty_outputs_with_huge_dimensions_do_nothing, D -> Result {
    // A column-major (permuted) empty output and broadcast, promoted operands of huge
    // other dimensions: the permuted and slab paths must neither loop nor allocate by
    // the huge length.
    let mut out = on::<D>(Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[HUGE, 0])?).t()?;
    assert_eq!(out.dims(), [0, HUGE]);
    let wide = on::<D>(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0, HUGE])?);
    out.add_(&wide)?;
    out.mul_(&out.share())?;
    assert_eq!(out.dims(), [0, HUGE]);
    let fresh = wide.mul(&on::<D>(Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[1, 1])?))?;
    assert_eq!((fresh.dims(), fresh.dtype()), (&[0, HUGE][..], DataType::ComplexDouble));
    Ok(())
});

device_test!(in_place_right_products_of_empty_matrices_with_huge_dimensions_do_nothing, D -> Result {
    // [2^40, 0] · [0, 0]: no rows to transform, no slab buffer of 2^40 rows.
    let mut tall = on::<D>(Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[HUGE, 0])?);
    tall.matmul_right_(&on::<D>(Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[0, 0])?))?;
    assert_eq!(tall.dims(), [HUGE, 0]);
    // [0, 2^40] · [2^40, 0]: an empty product of a huge inner dimension.
    let mut wide = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[0, HUGE])?);
    wide.matmul_right_(&on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[HUGE, 0])?))?;
    assert_eq!(wide.dims(), [0, 0]);
    // A growable basis of 2^40 rows and no columns restarts to no columns.
    let mut basis =
        ctensor_aten::GrowableTensor::new(DataType::Double, D::TYPE, &[HUGE, 0], 1, 0)?;
    basis.matmul_right_(&on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[0, 0])?))?;
    assert_eq!((basis.len(), basis.view()?.dims()), (0, &[HUGE, 0][..]));
    Ok(())
});
