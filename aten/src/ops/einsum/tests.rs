//! Unit tests of `mod`.

use super::contract::merge;
use super::*;

#[test]
fn blas_view_picks_n_for_column_major_and_t_or_c_for_row_major() {
    assert_eq!(blas_view(3, 4, 1, 5, false), Some((Trans::N, 5)));
    assert_eq!(blas_view(3, 4, 4, 1, false), Some((Trans::T, 4)));
    assert_eq!(blas_view(3, 4, 4, 1, true), Some((Trans::C, 4)));
    assert_eq!(blas_view(3, 4, 1, 5, true), None); // conj without transpose
    assert_eq!(blas_view(3, 4, 2, 7, false), None); // neither axis contiguous
    assert_eq!(merge(&[2, 3], &[3, 1]), Some((6, 1)));
    assert_eq!(merge(&[2, 3], &[1, 2]), None);
}
