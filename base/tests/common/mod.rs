//! What the host-block test binaries share: filling a block and checking its bytes.

use ctensor_base::alloc::Allocation;

/// What a test returns: a failing step names its error.
pub type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Writes `byte` over every byte of the block.
pub fn fill(a: &Allocation, byte: u8) {
    // SAFETY: the block holds `a.bytes()` bytes and is not shared.
    unsafe { std::ptr::write_bytes(a.as_ptr(), byte, a.bytes()) };
}

/// Whether every byte of the block is `byte`.
pub fn all(a: &Allocation, byte: u8) -> bool {
    // SAFETY: every byte of the block was written (`fill`) or zeroed.
    let s = unsafe { std::slice::from_raw_parts(a.as_ptr(), a.bytes()) };
    s.iter().all(|&b| b == byte)
}
