//! OpenBLAS's thread count (process-wide) around stacked solves: restored after one,
//! and after many that overlap from several threads, whatever order they finish in. Its
//! own test binary, so no other test changes the count meanwhile.

use ctensor_aten::{
    blas_num_threads, eigh, set_num_threads, DataType, DeviceType, EigBackend, EighRange, Tensor,
};

#[test]
fn overlapping_stacked_solves_restore_openblas_threads() {
    set_num_threads(2).unwrap();
    let before = blas_num_threads();
    assert_eq!(before, 2);
    let stack = Tensor::eye(DataType::Double, DeviceType::Cpu, 9)
        .unwrap()
        .unsqueeze(0)
        .unwrap()
        .broadcast_to(&[6, 9, 9])
        .unwrap()
        .contiguous()
        .unwrap();
    eigh(&stack, EighRange::All, EigBackend::LapackEvd).unwrap();
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
}
