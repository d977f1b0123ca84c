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
    /// Bytes live (allocated and not yet freed) through this thread, and their peak.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a thread-local Cell with a
// const initializer, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        grow(layout.size() as isize);
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        grow(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        grow(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        grow(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Moves this thread's live-byte count by `delta` and its peak with it.
fn grow(delta: isize) {
    let _ = LIVE.try_with(|l| {
        l.set(l.get() + delta);
        let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
    });
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

/// The most bytes `f` held at once on this thread beyond what was live before it
/// (after one warm-up call): its peak working memory, results included.
fn bytes(mut f: impl FnMut()) -> usize {
    f();
    let before = LIVE.with(|l| l.get());
    PEAK.with(|p| p.set(before));
    f();
    (PEAK.with(|p| p.get()) - before).max(0) as usize
}

#[test]
fn in_place_ops_on_a_column_major_block_allocate_no_block() -> TestResult {
    // A plane-wave code's block of bands in column-major order (as a band-by-band FFT
    // writes it): in-place ops on it must not go through a row-major temporary and a
    // copy back (they did: two block-sized allocations per op, 100 MB for a 64-atom
    // cell's block).
    // With the host cache off, so every block-sized request reaches the counter.
    ctensor_base::alloc::host_cache::set_limit(0);
    let (n, m) = (1000, 130);
    let block = n * m * 16;
    let mut out = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[m, n])?.t()?;
    let other = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[m, n])?.t()?;
    let cases = [
        ("add_ column-major", bytes(|| out.add_(&other).unwrap())),
        (
            "axpby_ column-major",
            bytes(|| out.axpby_(0.5, &other, 2.0).unwrap()),
        ),
        ("scale_", bytes(|| out.scale_(0.5).unwrap())),
    ];
    for (what, got) in cases {
        println!("{what}: {got} bytes (a block is {block})");
        assert!(
            got < 4096,
            "{what}: {got} bytes allocated (a block is {block})"
        );
    }
    // A broadcast operand is made dense one slab of rows at a time (2^19 elements,
    // 8 MB of c64), not at the output's size: here for an output of 4 slabs.
    let big = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[4096, 512])?;
    let column = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[4096, 1])?;
    let row = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[512])?;
    let out_bytes = 4096 * 512 * 16;
    let slab = (1 << 19) * 16;
    let mut inplace = big.clone();
    let real = Tensor::ones(DataType::Double, DeviceType::Cpu, &[4096, 512])?;
    for (what, got, bound) in [
        (
            "x * column",
            bytes(|| drop(big.mul(&column).unwrap())),
            out_bytes + slab + 4096,
        ),
        (
            "x -= row",
            bytes(|| inplace.sub_(&row).unwrap()),
            slab + 4096,
        ),
        // A real operand of the full shape, promoted slab by slab (a slab of it in f64,
        // then in c64).
        (
            "x /= real",
            bytes(|| inplace.div_(&real).unwrap()),
            slab / 2 + slab + 4096,
        ),
    ] {
        println!("{what}: {got} bytes (the output is {out_bytes})");
        assert!(got <= bound, "{what}: {got} bytes allocated, bound {bound}");
    }
    // The counter works: a row-major operand is read through one dense copy.
    let row_major = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[n, m])?;
    let copied = bytes(|| out.add_(&row_major).unwrap());
    assert!(
        copied >= block,
        "a row-major operand was not copied ({copied} bytes)"
    );
    Ok(())
}

#[test]
fn in_place_ops_on_a_column_window_work_in_slabs() -> TestResult {
    // A window of columns of a wider block (a solver's basis hands out such windows,
    // row stride the basis's capacity): dense in no axis order, so an op computes it
    // densely and copies back. It does so a slab of rows (2^19 elements, 8 MB of c64) at
    // a time, not through a temporary and an operand copy of the window's size.
    ctensor_base::alloc::host_cache::set_limit(0);
    let (n, m) = (16_384, 130);
    let window_bytes = n * m * 16;
    let slab = (1 << 19) * 16;
    let wide = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[n, 2 * m])?;
    let mut window = wide.narrow(1, 0, m)?;
    let other = Tensor::ones(DataType::ComplexDouble, DeviceType::Cpu, &[n, m])?;
    let scaled = bytes(|| window.scale_(0.5).unwrap());
    let added = bytes(|| window.add_(&other).unwrap());
    for (what, got) in [("scale_", scaled), ("add_", added)] {
        println!("{what}: {got} bytes (the window is {window_bytes})");
        assert!(
            got <= 2 * slab + 65_536,
            "{what}: {got} bytes allocated (the window is {window_bytes}, a slab {slab})"
        );
    }
    // The values: each op ran twice (`bytes` warms up), from ones: 1 → 0.5 → 0.25, then
    // + 1 twice; the other half of the block is untouched.
    let got = window.contiguous()?.to_vec::<ctensor_aten::c64>()?;
    assert!(got.iter().all(|z| *z == ctensor_aten::c64::new(2.25, 0.0)));
    let rest = wide
        .narrow(1, m, m)?
        .contiguous()?
        .to_vec::<ctensor_aten::c64>()?;
    assert!(rest.iter().all(|z| *z == ctensor_aten::c64::new(1.0, 0.0)));
    Ok(())
}
