//! Unit tests of `collectives`.

use super::*;

#[test]
fn counts_and_displacements_refuse_what_a_c_int_cannot_hold() {
    let (c, d) = counts_and_displs("test", &[3, 0, 5]).unwrap();
    assert_eq!((c, d), (vec![3, 0, 5], vec![0, 3, 3]));
    let max = c_int::MAX as usize;
    // One count too large, and a total too large with every count fitting.
    for counts in [vec![max + 1], vec![max, 1]] {
        match counts_and_displs("test", &counts) {
            Err(Error::Overflow { op: "test", .. }) => {}
            other => panic!("{counts:?}: got {other:?}"),
        }
    }
}
