//! Dropping a TensorMap — and every view and shallow copy of it — never frees the
//! foreign memory. A global allocator that watches one address proves it: the watcher
//! sees the `Vec`'s own free, so it would see ours too.
#![deny(unused_must_use)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ctensor::{DataType, DeviceType, Error, Order, Tensor, TensorMap};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

struct Watcher;
static WATCHED: AtomicUsize = AtomicUsize::new(0);
static FREED: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards every call to the system allocator unchanged; only records a flag.
unsafe impl GlobalAlloc for Watcher {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ptr as usize == WATCHED.load(Ordering::SeqCst) {
            FREED.store(true, Ordering::SeqCst);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Watcher = Watcher;

#[test]
fn dropping_a_map_and_its_views_never_frees_foreign_memory() -> TestResult {
    let mut data: Vec<f64> = (0..12).map(f64::from).collect();
    WATCHED.store(data.as_mut_ptr() as usize, Ordering::SeqCst);
    {
        // SAFETY: `data` outlives the map and all its views (they die in this block).
        let map = unsafe {
            TensorMap::new(data.as_mut_ptr(), DeviceType::Cpu, &[3, 4], Order::RowMajor)
        }?;
        let row = map.index(1)?;
        let mut twin = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[1])?;
        twin.copy_from(&map);
        drop(map);
        assert_eq!(row.to_vec::<f64>()?, [4.0, 5.0, 6.0, 7.0]);
        drop(row);
        drop(twin);
    }
    assert!(
        !FREED.load(Ordering::SeqCst),
        "ctensor freed memory it does not own"
    );
    assert_eq!(data[11], 11.0);
    drop(data);
    assert!(
        FREED.load(Ordering::SeqCst),
        "the watcher must see the Vec's own free"
    );
    Ok(())
}

#[test]
fn keep_alive_handle_is_dropped_with_the_last_sharer() -> TestResult {
    struct Owner(Vec<f32>, Arc<AtomicBool>);
    impl Drop for Owner {
        fn drop(&mut self) {
            self.1.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let mut owner = Owner(vec![1.0; 6], dropped.clone());
    let ptr = owner.0.as_mut_ptr();
    let owner: Arc<dyn std::any::Any + Send + Sync> = Arc::new(owner);
    // SAFETY: the memory lives inside `owner`, which the map keeps alive.
    let map = unsafe {
        TensorMap::with_keep_alive(ptr, DeviceType::Cpu, &[2, 3], Order::ColMajor, owner)
    }?;
    let view = map.t()?;
    drop(map);
    assert!(
        !dropped.load(Ordering::SeqCst),
        "a view still needs the memory"
    );
    assert_eq!(view.to_vec::<f32>()?, [1.0; 6]);
    drop(view);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the last sharer releases the owner"
    );
    Ok(())
}

#[test]
fn fortran_array_maps_in_column_major_order_with_a_leading_dimension() -> TestResult {
    // A(3, 2) stored with leading dimension 4 (a padded Fortran array).
    let mut a: Vec<f64> = vec![1.0, 2.0, 3.0, -1.0, 4.0, 5.0, 6.0, -1.0];
    // SAFETY: `a` outlives the map and is only accessed through it.
    let mut map = unsafe {
        TensorMap::from_raw(
            a.as_mut_ptr().cast(),
            DataType::Double,
            DeviceType::Cpu,
            &[3, 2],
            &[1, 4],
            None,
        )
    }?;
    assert_eq!(map.to_vec::<f64>()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    map.set_at(&[2, 1], 60.0f64)?;
    drop(map);
    assert_eq!(a[6], 60.0);
    assert_eq!(a[3], -1.0, "padding untouched");
    Ok(())
}

#[test]
fn map_constructor_errors() -> TestResult {
    let mut v = vec![0.0f64; 4];
    // SAFETY: every call below is rejected before the pointer is used, or maps `v` validly.
    unsafe {
        let e = TensorMap::new(
            std::ptr::null_mut::<f64>(),
            DeviceType::Cpu,
            &[2],
            Order::RowMajor,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    op: "TensorMap",
                    ..
                }
            ),
            "{e}"
        );
        assert!(TensorMap::new(
            std::ptr::null_mut::<f64>(),
            DeviceType::Cpu,
            &[0, 3],
            Order::RowMajor
        )
        .is_ok());
        let odd = (v.as_mut_ptr() as *mut u8)
            .add(1)
            .cast::<std::ffi::c_void>();
        let e = TensorMap::from_raw(odd, DataType::Double, DeviceType::Cpu, &[1], &[1], None)
            .unwrap_err();
        assert!(e.to_string().contains("aligned"), "{e}");
        let e = TensorMap::from_raw(
            v.as_mut_ptr().cast(),
            DataType::Double,
            DeviceType::Cpu,
            &[2, 2],
            &[1, 1],
            None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = TensorMap::from_raw(
            v.as_mut_ptr().cast(),
            DataType::Double,
            DeviceType::Cpu,
            &[2, 2],
            &[2],
            None,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    op: "TensorMap",
                    ..
                }
            ) && e.to_string().contains("1 strides"),
            "{e}"
        );
        // A host pointer given as GPU memory: refused either way, for the reason that
        // applies (no GPU here, or a pointer the CUDA driver does not know).
        let e = TensorMap::new(v.as_mut_ptr(), DeviceType::Gpu, &[4], Order::RowMajor).unwrap_err();
        if ctensor::gpu_available() {
            assert!(
                matches!(
                    e,
                    Error::InvalidArgument {
                        op: "TensorMap",
                        ..
                    }
                ) && e.to_string().contains("does not know"),
                "{e}"
            );
        } else {
            assert!(matches!(e, Error::DeviceUnavailable { .. }), "{e}");
        }
        let e = TensorMap::new(
            v.as_mut_ptr(),
            DeviceType::Cpu,
            &[usize::MAX, 4],
            Order::RowMajor,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }));
    }
    Ok(())
}
