//! DLPack: our exports read field by field, round trips for every dtype, layout and
//! device, a hand-made producer whose deleter must run exactly once whoever drops last,
//! the read-only flag, the legacy struct, and every malformed input (each of which must
//! still call the deleter once).
#![deny(unused_must_use)]

mod common;

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{on, random_vec, rng, TestResult};
use ctensor_aten::dlpack::*;
use ctensor_aten::{c64, DataType, Device, DeviceType, Error, Order, Scalar, Tensor};

// ---- our exports -------------------------------------------------------------------------

/// The (code, bits) DLPack gives each dtype, from the DLPack header's examples.
fn expected_code(d: DataType) -> (u8, u8) {
    match d {
        DataType::Float => (2, 32),
        DataType::Double => (2, 64),
        DataType::Int => (0, 32),
        DataType::Int64 => (0, 64),
        DataType::ComplexFloat => (5, 64),
        DataType::ComplexDouble => (5, 128),
        DataType::Half => (2, 16),
        DataType::BFloat16 => (4, 16),
    }
}

fn exports_describe_the_tensor<D: Device, T: Scalar>() -> TestResult {
    let v = random_vec::<T>(&mut rng(1), 5 * 7);
    let base = on::<D>(Tensor::from_slice(&v, &[5, 7])?);
    // A view with an offset and non-unit strides: rows 1..4, every column, transposed.
    let view = base.narrow(0, 1, 3)?.t()?;
    let before = Arc::strong_count(base.buffer());
    let m = view.to_dlpack()?;
    assert_eq!(
        Arc::strong_count(base.buffer()),
        before + 1,
        "the export holds the memory"
    );
    // SAFETY: `m` is a live export; only its fields are read here.
    unsafe {
        let mt = &*m;
        assert_eq!(mt.version, DLPackVersion { major: 1, minor: 1 });
        assert_eq!(mt.flags, 0);
        let dl = &mt.dl_tensor;
        assert_eq!(dl.ndim, 2);
        assert_eq!(std::slice::from_raw_parts(dl.shape, 2), [7, 3]);
        assert_eq!(std::slice::from_raw_parts(dl.strides, 2), [1, 7]);
        assert_eq!(dl.byte_offset, (7 * std::mem::size_of::<T>()) as u64);
        assert_eq!(dl.data, base.data_ptr(), "data is the allocation's start");
        let (code, bits) = expected_code(T::DTYPE);
        assert_eq!(
            (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes),
            (code, bits, 1)
        );
        let want = if D::TYPE == DeviceType::Cpu { 1 } else { 2 };
        assert_eq!(dl.device.device_type, want);
        // The consumer is done: the deleter frees the struct and releases the memory.
        (mt.deleter.unwrap())(m);
    }
    assert_eq!(Arc::strong_count(base.buffer()), before);
    Ok(())
}

device_test!(exports_describe_the_tensor_for_every_dtype, D -> Result {
    for_all_dtypes!(exports_describe_the_tensor, D);
    Ok(())
});

fn round_trip<D: Device, T: Scalar>() -> TestResult {
    for shape in [
        &[][..],
        &[0],
        &[1],
        &[300],
        &[3, 5],
        &[2, 3, 4],
        &[0, 1 << 40],
    ] {
        let n: usize = shape.iter().product();
        let v = random_vec::<T>(&mut rng(2), n);
        let row = Tensor::from_slice(&v, shape)?;
        let col = common::column_major(&row);
        for t in [row, col] {
            let t = on::<D>(t);
            let count = Arc::strong_count(t.buffer());
            // SAFETY: straight from `to_dlpack`, passed on once.
            let back = unsafe { Tensor::from_dlpack(t.to_dlpack()?) }?;
            assert_eq!(back.dtype(), T::DTYPE);
            assert_eq!(back.device(), D::TYPE);
            assert_eq!(back.dims(), shape);
            if n > 1 {
                assert_eq!(back.strides(), t.strides(), "{shape:?}");
                assert!(back.shares_memory_with(&t), "zero-copy");
            }
            let host = |x: &Tensor| x.to_device(DeviceType::Cpu).unwrap().to_vec::<T>().unwrap();
            assert_eq!(host(&back), v, "{shape:?}");
            drop(back);
            assert_eq!(Arc::strong_count(t.buffer()), count, "the deleter ran");
        }
    }
    Ok(())
}

device_test!(round_trips_share_memory, D -> Result {
    for_all_dtypes!(round_trip, D);
    Ok(())
});

#[test]
fn writes_through_an_import_reach_the_exporter() -> TestResult {
    let a = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[4])?;
    // SAFETY: straight from `to_dlpack`, passed on once.
    let mut b = unsafe { Tensor::from_dlpack(a.to_dlpack()?) }?;
    b.set_at(&[2], c64::new(1.0, -2.0))?;
    assert_eq!(a.get_value::<c64>(&[2])?, c64::new(1.0, -2.0));
    // The exported memory outlives the exporter.
    drop(a);
    assert_eq!(b.to_vec::<c64>()?[2], c64::new(1.0, -2.0));
    Ok(())
}

#[test]
fn empty_tensors_export_a_null_data_pointer() -> TestResult {
    let t = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[0, 3])?;
    let m = t.to_dlpack()?;
    // SAFETY: a live export.
    unsafe {
        assert!((*m).dl_tensor.data.is_null());
        assert_eq!((*m).dl_tensor.byte_offset, 0);
        let back = Tensor::from_dlpack(m)?;
        assert_eq!(back.dims(), [0, 3]);
    }
    Ok(())
}

#[test]
fn scoped_slices_cannot_be_exported() -> TestResult {
    let data = vec![1.0f64; 4];
    let e = Tensor::with_slice(&data, &[4], Order::RowMajor, |t| t.to_dlpack().map(|_| ()))?
        .unwrap_err();
    assert!(e.to_string().contains("try_clone"), "{e}");
    Ok(())
}

#[test]
fn legacy_exports_round_trip() -> TestResult {
    let v: Vec<f32> = random_vec(&mut rng(3), 12);
    let t = Tensor::from_slice(&v, &[3, 4])?.t()?;
    // SAFETY: straight from `to_dlpack_legacy`, passed on once.
    let back = unsafe { Tensor::from_dlpack_legacy(t.to_dlpack_legacy()?) }?;
    assert_eq!(back.strides(), [1, 4]);
    assert_eq!(back.to_vec::<f32>()?, t.to_vec::<f32>()?);
    Ok(())
}

// ---- a producer of our own making ----------------------------------------------------

/// What a test producer owns: the elements and the shape/strides arrays, plus the counter
/// its deleter bumps.
struct Owned {
    _data: Vec<f64>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    deleted: Arc<AtomicUsize>,
}

#[repr(C)]
struct Made {
    managed: DLManagedTensorVersioned,
    owned: Owned,
}

unsafe extern "C" fn made_deleter(m: *mut DLManagedTensorVersioned) {
    // SAFETY: `m` is the first field of a boxed `Made` from `produce`.
    let made = unsafe { Box::from_raw(m.cast::<Made>()) };
    made.owned.deleted.fetch_add(1, Ordering::SeqCst);
}

/// A producer's f64 tensor of `shape` and `strides` over `data`, with `edit` applied to
/// the struct (to make it malformed), and the counter of its deleter's calls.
fn produce(
    data: Vec<f64>,
    shape: &[i64],
    strides: Option<&[i64]>,
    flags: u64,
    edit: impl FnOnce(&mut DLManagedTensorVersioned),
) -> (*mut DLManagedTensorVersioned, Arc<AtomicUsize>) {
    let deleted = Arc::new(AtomicUsize::new(0));
    let mut made = Box::new(Made {
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 1 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(made_deleter),
            flags,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: DLDevice {
                    device_type: K_DL_CPU,
                    device_id: 0,
                },
                ndim: shape.len() as i32,
                dtype: DLDataType {
                    code: K_DL_FLOAT,
                    bits: 64,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        owned: Owned {
            _data: data,
            shape: shape.to_vec(),
            strides: strides.map(<[i64]>::to_vec).unwrap_or_default(),
            deleted: deleted.clone(),
        },
    });
    made.managed.dl_tensor.data = made.owned._data.as_mut_ptr().cast::<c_void>();
    made.managed.dl_tensor.shape = made.owned.shape.as_mut_ptr();
    if strides.is_some() {
        made.managed.dl_tensor.strides = made.owned.strides.as_mut_ptr();
    }
    edit(&mut made.managed);
    (Box::into_raw(made).cast(), deleted)
}

#[test]
fn the_deleter_runs_once_when_the_last_sharer_drops() -> TestResult {
    let data: Vec<f64> = (0..12).map(f64::from).collect();
    // Column-major 3 × 4, imported as it is.
    let (m, deleted) = produce(data, &[3, 4], Some(&[1, 3]), 0, |_| {});
    // SAFETY: a valid producer struct, passed on once.
    let t = unsafe { Tensor::from_dlpack(m) }?;
    assert_eq!(t.get_value::<f64>(&[1, 2])?, 7.0);
    let view = t.narrow(1, 1, 2)?.t()?;
    let shared = t.share();
    let on_thread = t.share();
    drop(t);
    assert_eq!(deleted.load(Ordering::SeqCst), 0);
    drop(shared);
    std::thread::spawn(move || drop(on_thread)).join().unwrap();
    assert_eq!(
        deleted.load(Ordering::SeqCst),
        0,
        "the view still holds the memory"
    );
    assert_eq!(view.to_vec::<f64>()?, [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    // Results of operations are ordinary tensors and do not hold the producer's memory.
    let copy = view.try_clone()?;
    assert!(!copy.shares_memory_with(&view));
    drop(view);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    drop(copy);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn the_read_only_flag_is_honoured() -> TestResult {
    let (m, deleted) = produce(
        vec![1.0, 2.0, 3.0],
        &[3],
        Some(&[1]),
        DLPACK_FLAG_BITMASK_READ_ONLY,
        |_| {},
    );
    // SAFETY: a valid producer struct, passed on once.
    let mut t = unsafe { Tensor::from_dlpack(m) }?;
    assert_eq!(t.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
    for e in [
        t.set_at(&[0], 5.0).unwrap_err(),
        t.fill(0.0).unwrap_err(),
        t.data_mut::<f64>().map(|_| ()).unwrap_err(),
        t.narrow(0, 1, 1)?.zero().unwrap_err(),
    ] {
        assert!(matches!(e, Error::BorrowConflict { .. }), "{e}");
        assert!(e.to_string().contains("READ_ONLY"), "{e}");
    }
    // Reads and new results are fine, a copy is writable, and the flag travels on.
    let mut c = t.try_clone()?;
    c.set_at(&[0], 5.0)?;
    let again = t.to_dlpack()?;
    // SAFETY: a live export.
    assert_eq!(unsafe { (*again).flags } & DLPACK_FLAG_BITMASK_READ_ONLY, 1);
    // SAFETY: passed on once.
    drop(unsafe { Tensor::from_dlpack(again) }?);
    drop(t);
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn malformed_tensors_are_refused_and_still_deleted() -> TestResult {
    type Edit = Box<dyn FnOnce(&mut DLManagedTensorVersioned)>;
    type Case = (&'static str, Vec<i64>, Option<Vec<i64>>, Edit);
    let cases: Vec<Case> = vec![
        (
            "major version",
            vec![2],
            None,
            Box::new(|m| m.version.major = 2),
        ),
        (
            "uint8",
            vec![2],
            None,
            Box::new(|m| {
                m.dl_tensor.dtype = DLDataType {
                    code: K_DL_UINT,
                    bits: 8,
                    lanes: 1,
                }
            }),
        ),
        (
            "bool",
            vec![2],
            None,
            Box::new(|m| {
                m.dl_tensor.dtype = DLDataType {
                    code: K_DL_BOOL,
                    bits: 8,
                    lanes: 1,
                }
            }),
        ),
        (
            "2 lane",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.dtype.lanes = 2),
        ),
        (
            "device type 4",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.device.device_type = 4),
        ),
        (
            "ndim >= 0",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.ndim = -1),
        ),
        (
            "null shape",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.shape = std::ptr::null_mut()),
        ),
        ("sizes >= 0", vec![-2], None, Box::new(|_| {})),
        ("strides >= 0", vec![2], Some(vec![-1]), Box::new(|_| {})),
        (
            "aligned",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.byte_offset = 1),
        ),
        ("twice", vec![3], Some(vec![0]), Box::new(|_| {})),
        (
            "wraps around the address space",
            vec![2],
            None,
            // 2^64 - 8: added with wrapping, the view would start 8 bytes before the data.
            Box::new(|m| m.dl_tensor.byte_offset = u64::MAX - 7),
        ),
        (
            "wraps around the address space",
            vec![2],
            None,
            Box::new(|m| m.dl_tensor.byte_offset = u64::MAX),
        ),
    ];
    for (needle, shape, strides, edit) in cases {
        let (m, deleted) = produce(vec![0.0; 4], &shape, strides.as_deref(), 0, edit);
        // SAFETY: a producer struct (malformed on purpose), passed on once.
        let e = unsafe { Tensor::from_dlpack(m) }.unwrap_err();
        assert!(
            e.to_string().contains(needle),
            "expected {needle:?} in: {e}"
        );
        assert!(e.to_string().starts_with("from_dlpack"), "{e}");
        assert_eq!(deleted.load(Ordering::SeqCst), 1, "{needle}: deleter calls");
    }
    // SAFETY: null is allowed and refused.
    let e = unsafe { Tensor::from_dlpack(std::ptr::null_mut()) }.unwrap_err();
    assert!(e.to_string().contains("null"), "{e}");
    Ok(())
}

#[test]
fn gpu_memory_without_a_gpu_is_refused_and_deleted() -> TestResult {
    if ctensor_aten::gpu_available() {
        println!("SKIP: gpu_memory_without_a_gpu: a GPU is present");
        return Ok(());
    }
    let (m, deleted) = produce(vec![0.0; 2], &[2], None, 0, |m| {
        m.dl_tensor.device.device_type = K_DL_CUDA;
    });
    // SAFETY: a producer struct, passed on once.
    let e = unsafe { Tensor::from_dlpack(m) }.unwrap_err();
    assert!(matches!(e, Error::DeviceUnavailable { .. }), "{e}");
    assert_eq!(deleted.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn legacy_producers_with_null_strides_and_no_deleter() -> TestResult {
    let mut data: Vec<i64> = (0..6).collect();
    // One row of three from the second element on (byte_offset 8).
    let mut shape = [1i64, 3];
    let mut legacy = Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: K_DL_CUDA_HOST,
                device_id: 0,
            },
            ndim: 2,
            dtype: DLDataType {
                code: K_DL_INT,
                bits: 64,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 8,
        },
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
    });
    // SAFETY: `data`, `shape` and `legacy` outlive the tensor (dropped below first).
    let t = unsafe { Tensor::from_dlpack_legacy(&mut *legacy) }?;
    assert_eq!(t.dims(), [1, 3]);
    assert_eq!(
        t.device(),
        DeviceType::Cpu,
        "pinned host memory is host memory"
    );
    assert_eq!(t.to_vec::<i64>()?, [1, 2, 3]);
    drop(t);
    drop(legacy);
    Ok(())
}

#[test]
fn every_dtype_code_maps_back() -> TestResult {
    for d in &DataType::ALL {
        let t = Tensor::ones(*d, DeviceType::Cpu, &[3])?;
        let m = t.to_dlpack()?;
        // SAFETY: a live export, passed on once.
        let back = unsafe { Tensor::from_dlpack(m) }?;
        assert_eq!(back.dtype(), *d);
    }
    Ok(())
}

#[test]
fn struct_layouts_are_dlpacks() -> TestResult {
    // dlpack.h 1.1 on LP64, from its field lists (tests/c/dlpack.c asserts the same of
    // the C declarations in include/ctensor.h).
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<DLDevice>(), 8);
    assert_eq!(size_of::<DLDataType>(), 4);
    assert_eq!(size_of::<DLTensor>(), 48);
    assert_eq!(offset_of!(DLTensor, ndim), 16);
    assert_eq!(offset_of!(DLTensor, dtype), 20);
    assert_eq!(offset_of!(DLTensor, byte_offset), 40);
    assert_eq!(offset_of!(DLManagedTensorVersioned, manager_ctx), 8);
    assert_eq!(offset_of!(DLManagedTensorVersioned, flags), 24);
    assert_eq!(offset_of!(DLManagedTensorVersioned, dl_tensor), 32);
    assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
    assert_eq!(offset_of!(DLManagedTensor, deleter), 56);
    assert_eq!(size_of::<DLManagedTensor>(), 64);
    Ok(())
}

#[test]
fn a_legacy_import_can_be_made_read_only() -> TestResult {
    let mut data = vec![1.0f64, 2.0, 3.0];
    let mut shape = [3i64];
    let mut legacy = Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: data.as_mut_ptr().cast(),
            device: DLDevice {
                device_type: K_DL_CPU,
                device_id: 0,
            },
            ndim: 1,
            dtype: DLDataType {
                code: K_DL_FLOAT,
                bits: 64,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        },
        manager_ctx: std::ptr::null_mut(),
        deleter: None,
    });
    // SAFETY: `data`, `shape` and `legacy` outlive the tensor (dropped below first).
    let mut t = unsafe { Tensor::from_dlpack_legacy_read_only(&mut *legacy) }?;
    assert_eq!(t.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
    let e = t.set_at(&[0], 5.0).unwrap_err();
    assert!(matches!(e, Error::BorrowConflict { .. }), "{e}");
    assert_eq!(t.to_vec::<f64>()?, [1.0, 2.0, 3.0], "nothing was written");
    // Our own legacy export, imported read-only, is read-only too (not handed back as
    // the writable original).
    let own = Tensor::ones(DataType::Float, DeviceType::Cpu, &[2])?;
    // SAFETY: a live export, passed on once.
    let mut back = unsafe { Tensor::from_dlpack_legacy_read_only(own.to_dlpack_legacy()?) }?;
    assert!(back.fill(0.0).is_err() && back.shares_memory_with(&own));
    // SAFETY: a null pointer is refused, not read.
    let e = unsafe { Tensor::from_dlpack_legacy_read_only(std::ptr::null_mut()) }.unwrap_err();
    assert!(e.to_string().contains("null"), "{e}");
    drop((t, back));
    drop(legacy);
    Ok(())
}
