//! Exchange–correlation through libxc (Debian's libxc-dev 5.x): a small FFI over
//! `xc_func_alloc` / `xc_func_init` / `xc_lda_exc_vxc`, LDA functionals, unpolarised.
//!
//! Names: `lda_teter93` (Teter's Padé fit, `XC_LDA_XC_TETER93`, ABINIT's `ixc 1`, the
//! functional the HGH parameters were fitted with), `lda_pz` (Slater exchange + Perdew–
//! Zunger), `lda_pw` (Slater + Perdew–Wang 92), or any libxc LDA names joined by `+`
//! (e.g. `lda_x+lda_c_vwn`).

use crate::error::{PwError, Result};
use std::ffi::{c_char, c_int, CString};

/// libxc's opaque functional.
#[repr(C)]
struct XcFuncType {
    _private: [u8; 0],
}

const XC_UNPOLARIZED: c_int = 1;
const XC_FAMILY_LDA: c_int = 1;

extern "C" {
    fn xc_func_alloc() -> *mut XcFuncType;
    fn xc_func_init(p: *mut XcFuncType, functional: c_int, nspin: c_int) -> c_int;
    fn xc_func_end(p: *mut XcFuncType);
    fn xc_func_free(p: *mut XcFuncType);
    fn xc_functional_get_number(name: *const c_char) -> c_int;
    fn xc_family_from_id(id: c_int, family: *mut c_int, number: *mut c_int) -> c_int;
    fn xc_lda_exc_vxc(
        p: *const XcFuncType,
        np: usize,
        rho: *const f64,
        zk: *mut f64,
        vrho: *mut f64,
    );
    fn xc_version_string() -> *const c_char;
}

/// An LDA exchange–correlation functional: the sum of one or more libxc functionals.
pub struct Xc {
    name: String,
    funcs: Vec<*mut XcFuncType>,
}

// SAFETY: a libxc functional is read-only after xc_func_init; evaluating it from another
// thread than the one that made it is allowed (libxc keeps no thread-local state), and
// `Xc` is never evaluated from two threads at once through `&mut`.
unsafe impl Send for Xc {}

impl Xc {
    /// The functional called `name` (see the module docs). An unknown name, a functional
    /// that is not LDA, or one libxc cannot initialise is `PwError::Xc`.
    pub fn new(name: &str) -> Result<Xc> {
        let parts: Vec<String> = match name {
            "lda_teter93" => vec!["lda_xc_teter93".into()],
            "lda_pz" => vec!["lda_x".into(), "lda_c_pz".into()],
            "lda_pw" => vec!["lda_x".into(), "lda_c_pw".into()],
            other => other.split('+').map(|s| s.trim().to_lowercase()).collect(),
        };
        let mut xc = Xc {
            name: name.to_string(),
            funcs: Vec::new(),
        };
        for part in parts {
            let c = CString::new(part.clone())
                .map_err(|_| PwError::Xc(format!("expected a libxc name, given {part:?}")))?;
            // SAFETY: `c` is a NUL-terminated string that outlives the call.
            let id = unsafe { xc_functional_get_number(c.as_ptr()) };
            if id <= 0 {
                return Err(PwError::Xc(format!(
                    "expected lda_teter93, lda_pz, lda_pw or libxc LDA names joined by '+', given {name:?} ({part:?} is not a libxc functional)"
                )));
            }
            let (mut family, mut number) = (0, 0);
            // SAFETY: both out-pointers are valid for one c_int each.
            unsafe { xc_family_from_id(id, &mut family, &mut number) };
            if family != XC_FAMILY_LDA {
                return Err(PwError::Xc(format!(
                    "expected an LDA functional, given {part:?} (libxc family {family}; only LDA is implemented)"
                )));
            }
            // SAFETY: xc_func_alloc returns a fresh allocation or null.
            let p = unsafe { xc_func_alloc() };
            if p.is_null() {
                return Err(PwError::Xc("libxc could not allocate a functional".into()));
            }
            // SAFETY: `p` is a fresh functional from xc_func_alloc.
            if unsafe { xc_func_init(p, id, XC_UNPOLARIZED) } != 0 {
                // SAFETY: `p` came from xc_func_alloc and was not initialised.
                unsafe { xc_func_free(p) };
                return Err(PwError::Xc(format!("libxc could not initialise {part:?}")));
            }
            xc.funcs.push(p);
        }
        Ok(xc)
    }

    /// The name it was made from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// ε_xc (energy per electron, Ha) and v_xc = d(ρ ε_xc)/dρ (Ha) at each density
    /// `rho` (electrons/bohr³). Densities below libxc's threshold (and negative ones,
    /// which a mixed density can have in tiny regions) give 0 for both.
    pub fn evaluate(&self, rho: &[f64], exc: &mut [f64], vxc: &mut [f64]) {
        assert!(
            exc.len() == rho.len() && vxc.len() == rho.len(),
            "xc: output lengths"
        );
        exc.fill(0.0);
        vxc.fill(0.0);
        let clean: Vec<f64> = rho.iter().map(|&r| if r > 0.0 { r } else { 0.0 }).collect();
        let (mut e, mut v) = (vec![0.0; rho.len()], vec![0.0; rho.len()]);
        for &p in &self.funcs {
            // SAFETY: `p` is an initialised unpolarised LDA functional; the three arrays
            // hold `rho.len()` doubles each (zk and vrho have one value per point for an
            // unpolarised LDA).
            unsafe {
                xc_lda_exc_vxc(
                    p,
                    clean.len(),
                    clean.as_ptr(),
                    e.as_mut_ptr(),
                    v.as_mut_ptr(),
                )
            };
            for i in 0..rho.len() {
                exc[i] += e[i];
                vxc[i] += v[i];
            }
        }
    }
}

impl Drop for Xc {
    fn drop(&mut self) {
        for &p in &self.funcs {
            // SAFETY: each `p` was initialised by xc_func_init and is freed once.
            unsafe {
                xc_func_end(p);
                xc_func_free(p);
            }
        }
    }
}

/// libxc's version string (e.g. "5.2.3").
pub fn libxc_version() -> String {
    // SAFETY: libxc returns a pointer to a static NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(xc_version_string()) }
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Teter's Padé ε_xc(r_s) and v_xc from the reference's closed form (GTH 1996).
    fn teter(rho: f64) -> (f64, f64) {
        let a = [
            0.4581652932831429,
            2.217058676663745,
            0.7405551735357053,
            0.01968227878617998,
        ];
        let b = [
            1.0,
            4.504130959426697,
            1.110667363742916,
            0.02359291751427506,
        ];
        let rs = (3.0 / (4.0 * std::f64::consts::PI * rho)).cbrt();
        let num = a[0] + a[1] * rs + a[2] * rs * rs + a[3] * rs.powi(3);
        let den = b[0] * rs + b[1] * rs * rs + b[2] * rs.powi(3) + b[3] * rs.powi(4);
        let dnum = a[1] + 2.0 * a[2] * rs + 3.0 * a[3] * rs * rs;
        let dden = b[0] + 2.0 * b[1] * rs + 3.0 * b[2] * rs * rs + 4.0 * b[3] * rs.powi(3);
        let e = -num / den;
        let de = -(dnum * den - num * dden) / (den * den);
        (e, e - rs / 3.0 * de)
    }

    #[test]
    fn libxc_teter93_is_the_reference_formula() -> Result<()> {
        let xc = Xc::new("lda_teter93")?;
        let rho: Vec<f64> = (0..301).map(|i| 1e-6 * 1.07f64.powi(i)).collect();
        let (mut e, mut v) = (vec![0.0; 301], vec![0.0; 301]);
        xc.evaluate(&rho, &mut e, &mut v);
        for i in 0..301 {
            let (we, wv) = teter(rho[i]);
            assert!(
                (e[i] - we).abs() < 1e-12 * we.abs().max(1.0),
                "ρ={} {} {}",
                rho[i],
                e[i],
                we
            );
            assert!(
                (v[i] - wv).abs() < 1e-11 * wv.abs().max(1.0),
                "ρ={} {} {}",
                rho[i],
                v[i],
                wv
            );
        }
        assert!(libxc_version().starts_with('5') || libxc_version().starts_with('6'));
        Ok(())
    }

    #[test]
    fn pz_differs_from_teter_and_bad_names_are_refused() -> Result<()> {
        let (t, pz) = (Xc::new("lda_teter93")?, Xc::new("lda_pz")?);
        let rho = [0.01, 0.1, 0.0, -1e-3];
        let (mut e1, mut e2, mut v) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        t.evaluate(&rho, &mut e1, &mut v);
        pz.evaluate(&rho, &mut e2, &mut v);
        assert!((e1[0] - e2[0]).abs() > 1e-5 && (e1[0] - e2[0]).abs() < 1e-2);
        assert_eq!((e1[2], e1[3], v[2], v[3]), (0.0, 0.0, 0.0, 0.0));
        for bad in ["lda_nonsense", "gga_x_pbe", "", "lda_x+\0"] {
            let e = Xc::new(bad).err().expect(bad);
            assert!(e.to_string().starts_with("xc: expected"), "{e}");
        }
        Ok(())
    }
}
