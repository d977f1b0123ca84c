//! Heap allocations per small op, counted by a global allocator on the calling thread, so
//! the framework's per-call overhead (issue 14: 66 allocations for one 4×4 product
//! through the einsum path) cannot creep back. The bounds are the counts of today's
//! code; a change that needs more must say why here. A fresh result costs 4 (its
//! dims, strides, buffer and memory); ops on operands of one dtype, shape and dense
//! layout take a direct path that allocates nothing else. Promotion, broadcasting and
//! strided operands take the general path, which allocates its views (checked below).
#![deny(unused_must_use)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ctensor_aten::{matmul, matmul_into, DataType, DeviceType, Tensor, Trans};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

struct Counting;

thread_local! {
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a thread-local Cell with a
// const initializer, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Allocations made by `f` on this thread (after one warm-up call, which may fill
/// lazily initialised state such as thread pools).
fn count(mut f: impl FnMut()) -> usize {
    f();
    let before = COUNT.with(|c| c.get());
    f();
    COUNT.with(|c| c.get()) - before
}

#[test]
fn small_ops_allocate_a_bounded_number_of_times() -> TestResult {
    let a = Tensor::ones(DataType::Double, DeviceType::Cpu, &[4, 4])?;
    let b = Tensor::ones(DataType::Double, DeviceType::Cpu, &[4, 4])?;
    let mut c = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 4])?;
    let cases: Vec<(&str, usize, usize)> = vec![
        (
            "zeros 4×4",
            count(|| drop(Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 4]).unwrap())),
            4,
        ),
        ("matmul 4×4", count(|| drop(matmul(&a, &b).unwrap())), 4),
        (
            "matmul_into 4×4",
            count(|| matmul_into(&a, Trans::N, &b, Trans::T, 1.0, 0.0, &mut c).unwrap()),
            0,
        ),
        ("&a + &b 4×4", count(|| drop((&a + &b).unwrap())), 4),
        ("a.add_(&b) 4×4", count(|| c.add_(&b).unwrap()), 0),
    ];
    for (what, got, bound) in &cases {
        println!("{what}: {got} allocations (bound {bound})");
    }
    for (what, got, bound) in cases {
        assert!(
            got <= bound,
            "{what}: {got} heap allocations, bound {bound}"
        );
    }
    // The counter works: a batched product takes the general einsum path, which
    // allocates its plan and views.
    let a3 = Tensor::ones(DataType::Double, DeviceType::Cpu, &[2, 4, 4])?;
    let general = count(|| drop(matmul(&a3, &a3).unwrap()));
    assert!(
        general > 12,
        "the einsum path made only {general} allocations"
    );
    Ok(())
}
