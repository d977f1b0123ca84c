//! Turning the finiteness check off (process-wide, so in a test binary of its own): NaN
//! input then reaches LAPACK, which returns whatever it computes.

use ctensor_aten::{eigh, set_check_finite, EigBackend, EighRange, Error, Result, Tensor};

#[test]
fn the_finiteness_check_can_be_turned_off_and_on() -> Result<()> {
    let a = Tensor::from_slice(&[0.0f64, 0.0, f64::NAN, 4.0], &[2, 2])?;
    set_check_finite(false);
    let off = eigh(&a, EighRange::All, EigBackend::LapackEvd);
    set_check_finite(true);
    let on = eigh(&a, EighRange::All, EigBackend::LapackEvd);
    assert!(
        !matches!(off, Err(Error::NonFinite { .. })),
        "check off: {off:?}"
    );
    assert!(
        matches!(on, Err(Error::NonFinite { row: 1, col: 0, .. })),
        "check on: {on:?}"
    );
    Ok(())
}
