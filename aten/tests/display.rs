//! Display prints like NumPy: a header, nested brackets for any rank, complex as a+bi,
//! and the middle of big tensors elided; on the D::TYPE and, through `device_test!`, on the
//! GPU (copied to the host to print; one `SKIP` line per test without a GPU).
#![deny(unused_must_use)]

mod common;

use common::{on, TestResult};

use ctensor_aten::{bf16, c32, c64, f16, DataType, Device, Tensor};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn body(t: &Tensor) -> Fallible<String> {
    Ok({
        let s = t.to_string();
        let (head, rest) = s.split_once('\n').unwrap();
        assert_eq!(
            head,
            format!(
                "Tensor(shape={:?}, dtype={}, device={})",
                t.dims(),
                t.dtype(),
                t.device()
            )
        );
        rest.to_string()
    })
}

device_test!(display_each_dtype, D -> Result {
    let cases: Vec<(Tensor, &str)> = vec![
        (
            on::<D>(Tensor::from_slice(&[1.5f32, -2.0], &[2])?),
            "[ 1.5000, -2.0000]",
        ),
        (
            on::<D>(Tensor::from_slice(&[0.25f64, 10.0], &[2])?),
            "[ 0.2500, 10.0000]",
        ),
        (
            on::<D>(Tensor::from_slice(&[3i32, -12], &[2])?),
            "[  3, -12]",
        ),
        (
            on::<D>(Tensor::from_slice(&[i64::MAX], &[1])?),
            "[9223372036854775807]",
        ),
        (
            on::<D>(Tensor::from_slice(&[c32::new(1.0, -2.0)], &[1])?),
            "[1.0000-2.0000i]",
        ),
        (
            on::<D>(Tensor::from_slice(&[c64::new(-0.5, 3.0), c64::new(0.0, 0.0)], &[2])?),
            "[-0.5000+3.0000i,  0.0000+0.0000i]",
        ),
        (
            on::<D>(Tensor::from_slice(&[f16::from_f32(0.5)], &[1])?),
            "[0.5000]",
        ),
        (
            on::<D>(Tensor::from_slice(&[bf16::from_f32(-4.0)], &[1])?),
            "[-4.0000]",
        ),
        (
            on::<D>(Tensor::from_slice(&[1e-6f64, 2e9, f64::NAN, f64::NEG_INFINITY], &[4])?),
            "[1.0000e-6,  2.0000e9,       nan,      -inf]",
        ),
    ];
    for (t, want) in cases {
        assert_eq!(body(&t)?, want, "{}", t.dtype());
    }
    Ok(())
});

device_test!(display_ranks_0_to_4, D -> Result {
    assert_eq!(body(&Tensor::scalar(7i32)?)?, "7");
    let r = |n: &[i64]| {
        let count = n.iter().product::<i64>() as f64;
        Tensor::arange(DataType::Int, D::TYPE, 0.0, count, 1.0)
            .unwrap()
            .reshape(n)
            .unwrap()
    };
    assert_eq!(body(&r(&[3]))?, "[0, 1, 2]");
    assert_eq!(body(&r(&[2, 3]))?, "[[0, 1, 2],\n [3, 4, 5]]");
    assert_eq!(
        body(&r(&[2, 2, 2]))?,
        "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]"
    );
    assert_eq!(body(&r(&[2, 1, 1, 2]))?, "[[[[0, 1]]],\n\n\n [[[2, 3]]]]");
    assert_eq!(
        body(&Tensor::zeros(DataType::Float, D::TYPE, &[0])?)?,
        "[]"
    );
    assert_eq!(
        body(&Tensor::zeros(DataType::Float, D::TYPE, &[2, 0])?)?,
        "[[],\n []]"
    );
    // A transposed view prints its logical order.
    assert_eq!(
        body(&r(&[2, 3]).t()?)?,
        "[[0, 3],\n [1, 4],\n [2, 5]]"
    );
    Ok(())
});

device_test!(display_elides_big_tensors, D -> Result {
    let t = Tensor::arange(DataType::Int64, D::TYPE, 0.0, 2000.0, 1.0)?;
    assert_eq!(body(&t)?, "[   0,    1,    2, ..., 1997, 1998, 1999]");
    let m = t.reshape(&[40, 50])?;
    let s = body(&m)?;
    assert!(
        s.starts_with("[[   0,    1,    2, ...,   47,   48,   49],\n [  50,"),
        "{s}"
    );
    assert!(s.contains(" ...,\n [1850,"), "{s}");
    assert!(s.ends_with("1997, 1998, 1999]]"), "{s}");
    assert_eq!(s.lines().count(), 7);
    Ok(())
});

#[test]
fn empty_tensors_with_huge_other_axes_print_without_building_their_indices() -> TestResult {
    use ctensor_aten::{DataType, DeviceType};
    let t = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[0, 1 << 40])?;
    assert_eq!(body(&t)?, "[]");
    let t = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[1 << 40, 0])?;
    assert_eq!(body(&t)?, "[[],\n [],\n [],\n ...,\n [],\n [],\n []]");
    let t = Tensor::zeros(DataType::ComplexFloat, DeviceType::Cpu, &[2, 1 << 62, 0])?;
    assert!(body(&t)?.contains("..."), "{}", body(&t)?);
    // Small empty axes still print in full.
    let t = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[3, 0])?;
    assert_eq!(body(&t)?, "[[],\n [],\n []]");
    Ok(())
}
