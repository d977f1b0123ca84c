//! `MirroredTensor`: version tracking against a model for every order of reads, writes
//! and write-onlys, copies made only for stale reads, values carried across devices,
//! views, threads, tampering, eviction, and the errors (before the first write, and for
//! a device that is missing).
#![deny(unused_must_use)]

mod common;

use std::sync::{Arc, Mutex};

use ctensor_aten::{DataType, DeviceType, Error, MirroredTensor, Tensor};
use rand::{Rng, SeedableRng};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

const CPU: DeviceType = DeviceType::Cpu;
const GPU: DeviceType = DeviceType::Gpu;

fn value(t: &Tensor) -> Fallible<f64> {
    Ok({
        let v = t.to_device(CPU)?.to_vec::<f64>()?;
        assert!(
            v.iter().all(|&x| x == v[0]),
            "a copy holds mixed values: {v:?}"
        );
        v[0]
    })
}

#[test]
fn reading_before_any_write_is_an_error() -> TestResult {
    let mut m = MirroredTensor::new(DataType::Double, &[3, 4])?;
    assert_eq!(m.version(), 0);
    for e in [
        m.read(CPU).unwrap_err(),
        m.write(CPU).unwrap_err(),
        m.read(GPU).unwrap_err(),
    ] {
        assert!(matches!(e, Error::Uninitialized { .. }), "{e}");
        assert!(e.to_string().contains("write_only"), "{e}");
    }
    assert!(
        !m.has_copy(CPU) && !m.has_copy(GPU),
        "nothing allocated by failed reads"
    );
    let e = MirroredTensor::new(DataType::Double, &[1 << 40, 1 << 40]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    Ok(())
}

/// Random reads, writes and write-onlys on `devices`, checked against a model of the
/// versions and values: a read returns the last value written, a copy is made exactly
/// when a stale copy is read or written.
fn against_the_model(devices: &[DeviceType], seed: u64) -> TestResult {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut m = MirroredTensor::new(DataType::Double, &[5, 3])?;
    let (mut latest, mut versions, mut copies) = (0u64, [0u64; 2], 0u64);
    let mut current_value = f64::NAN;
    let idx = |d: DeviceType| usize::from(d == GPU);
    for step in 0..200 {
        let d = devices[rng.gen_range(0..devices.len())];
        let what = format!("seed {seed} step {step} on {d}");
        match rng.gen_range(0..3) {
            0 => {
                let r = m.read(d);
                if latest == 0 {
                    assert!(matches!(r, Err(Error::Uninitialized { .. })), "{what}");
                    continue;
                }
                let got = value(r?)?;
                assert_eq!(got, current_value, "{what}: read");
                if versions[idx(d)] != latest {
                    copies += 1;
                    versions[idx(d)] = latest;
                }
            }
            1 => {
                let x = f64::from(step);
                let r = m.write(d);
                if latest == 0 {
                    assert!(matches!(r, Err(Error::Uninitialized { .. })), "{what}");
                    continue;
                }
                let t = r?;
                assert_eq!(
                    value(t)?,
                    current_value,
                    "{what}: write sees the newest values"
                );
                t.fill(x)?;
                if versions[idx(d)] != latest {
                    copies += 1;
                }
                latest += 1;
                versions[idx(d)] = latest;
                current_value = x;
            }
            _ => {
                let x = -f64::from(step);
                m.write_only(d)?.fill(x)?;
                latest += 1;
                versions[idx(d)] = latest;
                current_value = x;
            }
        }
        assert_eq!(m.version(), latest, "{what}");
        for dev in devices {
            assert_eq!(
                m.is_current(*dev),
                latest > 0 && versions[idx(*dev)] == latest,
                "{what}"
            );
        }
        assert_eq!(m.copies_made(), copies, "{what}: copies");
    }
    if devices == [CPU] {
        assert_eq!(m.copies_made(), 0, "one device never copies");
    }
    Ok(())
}

#[test]
fn host_only_sequences_follow_the_model_and_never_copy() -> TestResult {
    for seed in 0..50 {
        against_the_model(&[CPU], seed)?;
    }
    Ok(())
}

gpu_test!(two_device_sequences_follow_the_model, -> Result {
    for seed in 0..20 {
        against_the_model(&[CPU, GPU], seed)?;
    }
    Ok(())
});

#[test]
fn a_missing_gpu_is_an_error_that_leaves_the_state_alone() -> TestResult {
    if ctensor_aten::gpu_available() {
        println!("SKIP: a GPU is present");
        return Ok(());
    }
    let mut m = MirroredTensor::from_tensor(Tensor::ones(DataType::Float, CPU, &[4])?)?;
    let e = m.read(GPU).unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { .. }), "{e}");
    let e = m.write_only(GPU).unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { .. }), "{e}");
    assert!(m.is_current(CPU) && !m.is_current(GPU) && m.version() == 1);
    assert_eq!(m.copies_made(), 0);
    // The only current copy cannot be evicted to a device that is not there.
    assert!(m.evict(CPU).is_err());
    assert!(m.has_copy(CPU) && m.is_current(CPU));
    assert!(m.evict(GPU).is_ok(), "no copy there: nothing to do");
    assert_eq!(m.read(CPU)?.to_vec::<f32>()?, [1.0; 4]);
    Ok(())
}

#[test]
fn views_of_copies_read_and_write_the_copy() -> TestResult {
    let base = Tensor::arange(DataType::Double, CPU, 0.0, 12.0, 1.0)?.reshape(&[4, 3])?;
    let mut m = MirroredTensor::from_tensor(base.t()?)?;
    assert_eq!(m.dims(), [3, 4]);
    assert!(m.read(CPU)?.is_contiguous(), "kept row-major");
    let row = m.read(CPU)?.index(1)?;
    assert_eq!(row.to_vec::<f64>()?, [1.0, 4.0, 7.0, 10.0]);
    drop(row);
    let v1 = m.version();
    let mut block = m.write(CPU)?.narrow(1, 2, 2)?;
    block.fill(-1.0)?;
    drop(block);
    assert_eq!(m.version(), v1 + 1);
    assert_eq!(
        m.read(CPU)?.to_vec::<f64>()?,
        [0.0, 3.0, -1.0, -1.0, 1.0, 4.0, -1.0, -1.0, 2.0, 5.0, -1.0, -1.0]
    );
    Ok(())
}

#[test]
fn a_copy_reshaped_through_a_write_reference_is_refused() -> TestResult {
    let mut m = MirroredTensor::from_tensor(Tensor::zeros(DataType::Double, CPU, &[2, 3])?)?;
    m.write(CPU)?.resize(&[7])?;
    let e = m.read(CPU).unwrap_err();
    assert!(e.to_string().contains("resized or replaced"), "{e}");
    Ok(())
}

#[test]
fn threads_share_one_mirror_behind_a_mutex() -> TestResult {
    let m = MirroredTensor::from_tensor(Tensor::zeros(DataType::Double, CPU, &[16])?)?;
    let m = Arc::new(Mutex::new(m));
    let one = Tensor::ones(DataType::Double, CPU, &[16])?;
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut g = m.lock().unwrap();
                    g.write(CPU).unwrap().add_(&one).unwrap();
                }
            });
        }
    });
    let mut g = m.lock().unwrap();
    assert_eq!(g.version(), 1 + 400);
    assert_eq!(value(g.read(CPU)?)?, 400.0);
    assert_eq!(g.copies_made(), 0);
    Ok(())
}

#[test]
fn zero_size_with_huge_other_dimensions() -> TestResult {
    let mut m = MirroredTensor::new(DataType::ComplexDouble, &[0, 1 << 40])?;
    assert!(matches!(m.read(CPU), Err(Error::Uninitialized { .. })));
    assert_eq!(m.write_only(CPU)?.dims(), [0, 1 << 40]);
    let t = m.read(CPU)?;
    assert_eq!((t.dims(), t.numel()), (&[0, 1 << 40][..], 0));
    m.write(CPU)?.fill(1.0)?;
    assert_eq!((m.version(), m.copies_made()), (2, 0));
    Ok(())
}
