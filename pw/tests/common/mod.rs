//! What the comparisons with ABINIT (`abinit.rs`) and Quantum ESPRESSO (`qe.rs`) share.

use ctensor_pw::scf::KBands;
use serde_json::Value;

/// A number of the reference.
pub fn f(v: &Value) -> f64 {
    v.as_f64().expect("a number in the reference")
}

/// Each k-point of the reference (`kpoints`: `kred`, `weight`, `npw`, `eigenvalues_ha`)
/// against the run's k-point that `same(k_reference, k_ours)` calls equivalent: the same
/// number of k-points, the plane-wave count exactly, the weight to 1e-12, and every
/// eigenvalue against the reference's minus `shift` (the reference's G = 0 constant).
/// Returns the largest eigenvalue difference (Ha).
pub fn compare_kpoints(
    case: &str,
    code: &str,
    r: &Value,
    bands: &[KBands],
    same: impl Fn([f64; 3], [f64; 3]) -> bool,
    shift: f64,
) -> f64 {
    let kref = r["kpoints"].as_array().unwrap();
    assert_eq!(bands.len(), kref.len(), "{case}: k-points after symmetry");
    let mut worst: f64 = 0.0;
    for k in kref {
        let kr = [0, 1, 2].map(|i| f(&k["kred"][i]));
        let ours = bands
            .iter()
            .find(|b| same(kr, b.kpoint.kred))
            .unwrap_or_else(|| panic!("{case}: no k-point equivalent to {code}'s {kr:?}"));
        assert_eq!(
            ours.npw as u64,
            k["npw"].as_u64().unwrap(),
            "{case}: npw at {kr:?}"
        );
        assert!(
            (ours.kpoint.weight - f(&k["weight"])).abs() < 1e-12,
            "{case}: weight at {kr:?}"
        );
        let theirs = k["eigenvalues_ha"].as_array().unwrap();
        assert_eq!(ours.eigenvalues.len(), theirs.len(), "{case}: bands");
        for (a, b) in ours.eigenvalues.iter().zip(theirs) {
            worst = worst.max((a - (f(b) - shift)).abs());
        }
    }
    worst
}
