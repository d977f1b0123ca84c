//! `CTENSOR_HUGE_PAGES=1`: large host blocks are aligned to 2 MiB (and advised for
//! huge pages), zeroed ones still read as zero, and every block is freed with the layout
//! it was allocated with. One test in its own binary, so the flag is set before the
//! allocator first reads it.
#![deny(unused_must_use)]

use ctensor_base::alloc::{Allocation, CPU_ALIGN};
use ctensor_base::DeviceType;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

#[test]
fn huge_page_blocks_are_aligned_zeroed_and_freed() -> TestResult {
    std::env::set_var("CTENSOR_HUGE_PAGES", "1");
    let huge = 2usize << 20;
    for bytes in [1usize, 4096, huge - 1, huge, 3 * huge + 5] {
        let z = Allocation::zeroed(DeviceType::Cpu, bytes)?;
        let u = Allocation::uninit(DeviceType::Cpu, bytes)?;
        let align = if bytes >= huge { huge } else { CPU_ALIGN };
        assert_eq!(z.as_ptr() as usize % align, 0, "{bytes} bytes, zeroed");
        assert_eq!(u.as_ptr() as usize % align, 0, "{bytes} bytes, uninit");
        // SAFETY: `z` holds `bytes` zeroed bytes; `u` is written whole before it is
        // read; neither is shared.
        unsafe {
            let zs = std::slice::from_raw_parts(z.as_ptr(), bytes);
            assert!(zs.iter().all(|&b| b == 0), "{bytes} bytes not zeroed");
            std::ptr::write_bytes(u.as_ptr(), 7, bytes);
            let us = std::slice::from_raw_parts(u.as_ptr(), bytes);
            assert!(us.iter().all(|&b| b == 7));
        }
    }
    Ok(())
}
