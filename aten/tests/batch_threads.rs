//! OpenBLAS's thread count (process-wide) around stacked solves: restored after one,
//! and after many that overlap from several threads, whatever order they finish in. Its
//! own test binary, so no other test changes the count meanwhile.
#![deny(unused_must_use)]

use ctensor_aten::{
    blas_num_threads, eigh, set_num_threads, DataType, DeviceType, EigBackend, EighRange, Tensor,
};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

#[test]
fn overlapping_stacked_solves_restore_openblas_threads() -> TestResult {
    set_num_threads(2)?;
    let before = blas_num_threads();
    assert_eq!(before, 2);
    let stack = Tensor::eye(DataType::Double, DeviceType::Cpu, 9)?
        .unsqueeze(0)?
        .broadcast_to(&[6, 9, 9])?
        .contiguous()?;
    eigh(&stack, EighRange::All, EigBackend::LapackEvd)?;
    assert_eq!(
        blas_num_threads(),
        before,
        "restored after one stacked solve"
    );
    // Four threads, each solving stacks in a loop: their batches overlap and end in
    // every order.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    eigh(&stack, EighRange::All, EigBackend::LapackEvd).unwrap();
                }
            });
        }
    });
    assert_eq!(
        blas_num_threads(),
        before,
        "restored after overlapping stacked solves"
    );
    Ok(())
}
