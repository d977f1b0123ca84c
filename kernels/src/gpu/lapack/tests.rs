//! Unit tests of `lapack`.

use super::workspace_len;
use ctensor_base::Error;

#[test]
fn a_documented_workspace_beyond_32_bits_is_refused_before_the_query() {
    use super::{check_bound, evd_bound};
    // Every order the 32-bit query answers rightly passes.
    for n in [0usize, 1, 7, 1000, 32_766] {
        assert!(check_bound("Dsyevd", evd_bound(n, true)).is_ok(), "n = {n}");
    }
    // 1 + 6n + 2n² passes i32::MAX at n = 32 767 (the query answers negative) and
    // wraps to a small positive size from n = 46 341, which workspace_len cannot see.
    for n in [32_767usize, 46_341, 46_342, 100_000] {
        let bound = evd_bound(n, true);
        assert_eq!(bound, 1 + 6 * n as u128 + 2 * (n as u128).pow(2));
        match check_bound("Dsyevd", bound) {
            Err(Error::Overflow { what, .. }) => {
                assert!(
                    what.contains("Dsyevd") && what.contains(&bound.to_string()),
                    "{what}"
                )
            }
            other => panic!("n = {n}: expected Overflow, got {other:?}"),
        }
    }
    let wrapped = evd_bound(46_341, true) as u64 as u32 as i32;
    assert!(
        wrapped > 0 && wrapped < 1 << 20,
        "the wrap is small and positive: {wrapped}"
    );
    assert!(
        workspace_len("Dsyevd", wrapped).is_ok(),
        "what the old check let through"
    );
    // Without vectors the bound is linear: any order a 32-bit n can give passes.
    assert!(check_bound("Dsyevd", evd_bound(i32::MAX as usize / 4, false)).is_ok());
}

#[test]
fn an_overflowed_32_bit_workspace_size_is_an_error_not_one_element() {
    assert_eq!(workspace_len("Dsyevd", 0).unwrap(), 1);
    assert_eq!(workspace_len("Dsyevd", 12345).unwrap(), 12345);
    assert_eq!(
        workspace_len("Dsyevd", i32::MAX).unwrap(),
        i32::MAX as usize
    );
    // What a wrapped size looks like: i32::MAX + 1 elements reads back negative.
    let wrapped = (i32::MAX as i64 + 1) as i32;
    match workspace_len("Dsyevd", wrapped) {
        Err(Error::Overflow { what, .. }) => assert!(what.contains("Dsyevd")),
        other => panic!("expected Overflow, got {other:?}"),
    }
}
