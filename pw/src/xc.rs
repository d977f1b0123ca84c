//! Exchange–correlation through libxc (Debian's libxc-dev 5.x): a small FFI over
//! `xc_func_alloc` / `xc_func_init` / `xc_lda_exc_vxc` / `xc_gga_exc_vxc`, LDA and GGA
//! functionals, unpolarised.
//!
//! Names: `lda_teter93` (Teter's Padé fit, `XC_LDA_XC_TETER93`, ABINIT's `ixc 1`, the
//! functional the HGH parameters were fitted with), `lda_pz` (Slater exchange + Perdew–
//! Zunger), `lda_pw` (Slater + Perdew–Wang 92), `gga_pbe` (PBE exchange + correlation,
//! libxc's `GGA_X_PBE` + `GGA_C_PBE`, ABINIT's `ixc -101130`), `gga_pbesol`, or any libxc
//! LDA and GGA names joined by `+` (e.g. `lda_x+lda_c_vwn`, `gga_x_b88+gga_c_lyp`).
//! Hybrid and meta-GGA functionals are refused: they need more than the density and its
//! gradient.

use crate::error::{PwError, Result};
use std::ffi::{c_char, c_int, CString};

/// libxc's opaque functional.
#[repr(C)]
struct XcFuncType {
    _private: [u8; 0],
}

const XC_UNPOLARIZED: c_int = 1;
const XC_FAMILY_LDA: c_int = 1;
const XC_FAMILY_GGA: c_int = 2;

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
    fn xc_gga_exc_vxc(
        p: *const XcFuncType,
        np: usize,
        rho: *const f64,
        sigma: *const f64,
        zk: *mut f64,
        vrho: *mut f64,
        vsigma: *mut f64,
    );
    fn xc_lda_exc(p: *const XcFuncType, np: usize, rho: *const f64, zk: *mut f64);
    fn xc_gga_exc(
        p: *const XcFuncType,
        np: usize,
        rho: *const f64,
        sigma: *const f64,
        zk: *mut f64,
    );
    fn xc_version_string() -> *const c_char;
}

/// One initialised libxc functional and whether it reads the gradient.
struct Part {
    p: *mut XcFuncType,
    gga: bool,
}

/// An exchange–correlation functional: the sum of one or more libxc LDA and GGA
/// functionals.
pub struct Xc {
    name: String,
    parts: Vec<Part>,
}

// SAFETY: a libxc functional is read-only after xc_func_init; evaluating it from another
// thread than the one that made it is allowed (libxc keeps no thread-local state), and
// `Xc` is never evaluated from two threads at once through `&mut`.
unsafe impl Send for Xc {}

/// What [`Xc::evaluate_gga`] gives at each point.
pub struct XcPoint<'a> {
    /// ε_xc, the energy per electron (Ha).
    pub exc: &'a mut [f64],
    /// ∂(ρ ε_xc)/∂ρ at fixed σ (Ha).
    pub vrho: &'a mut [f64],
    /// ∂(ρ ε_xc)/∂σ at fixed ρ (Ha bohr⁵); zero for an LDA.
    pub vsigma: &'a mut [f64],
}

impl Xc {
    /// The functional called `name` (see the module docs). An unknown name, a functional
    /// that is neither LDA nor GGA, or one libxc cannot initialise is `PwError::Xc`.
    pub fn new(name: &str) -> Result<Xc> {
        let parts: Vec<String> = match name {
            "lda_teter93" => vec!["lda_xc_teter93".into()],
            "lda_pz" => vec!["lda_x".into(), "lda_c_pz".into()],
            "lda_pw" => vec!["lda_x".into(), "lda_c_pw".into()],
            "gga_pbe" => vec!["gga_x_pbe".into(), "gga_c_pbe".into()],
            "gga_pbesol" => vec!["gga_x_pbe_sol".into(), "gga_c_pbe_sol".into()],
            other => other.split('+').map(|s| s.trim().to_lowercase()).collect(),
        };
        let mut xc = Xc {
            name: name.to_string(),
            parts: Vec::new(),
        };
        for part in parts {
            let c = CString::new(part.clone())
                .map_err(|_| PwError::Xc(format!("expected a libxc name, given {part:?}")))?;
            // SAFETY: `c` is a NUL-terminated string that outlives the call.
            let id = unsafe { xc_functional_get_number(c.as_ptr()) };
            if id <= 0 {
                return Err(PwError::Xc(format!(
                    "expected lda_teter93, lda_pz, lda_pw, gga_pbe, gga_pbesol or libxc LDA and GGA names joined by '+', given {name:?} ({part:?} is not a libxc functional)"
                )));
            }
            let (mut family, mut number) = (0, 0);
            // SAFETY: both out-pointers are valid for one c_int each.
            unsafe { xc_family_from_id(id, &mut family, &mut number) };
            if family != XC_FAMILY_LDA && family != XC_FAMILY_GGA {
                return Err(PwError::Xc(format!(
                    "expected an LDA or GGA functional, given {part:?} (libxc family {family}; hybrids and meta-GGAs are not implemented)"
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
            xc.parts.push(Part {
                p,
                gga: family == XC_FAMILY_GGA,
            });
        }
        Ok(xc)
    }

    /// The name it was made from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether some part reads the density's gradient (then use
    /// [`evaluate_gga`](Self::evaluate_gga)).
    pub fn is_gga(&self) -> bool {
        self.parts.iter().any(|p| p.gga)
    }

    /// ε_xc (energy per electron, Ha) and v_xc = d(ρ ε_xc)/dρ (Ha) at each density
    /// `rho` (electrons/bohr³) of an LDA. Densities below libxc's threshold (and negative
    /// ones, which a mixed density can have in tiny regions) give 0 for both. A GGA, or
    /// outputs whose lengths differ from `rho`'s, are `PwError::Xc`.
    pub fn evaluate(&self, rho: &[f64], exc: &mut [f64], vxc: &mut [f64]) -> Result<()> {
        if self.is_gga() {
            return Err(PwError::Xc(format!(
                "expected an LDA for evaluate, given the GGA {:?} (it needs σ = |∇ρ|²: evaluate_gga)",
                self.name
            )));
        }
        if exc.len() != rho.len() || vxc.len() != rho.len() {
            return Err(PwError::Xc(format!(
                "expected ρ, ε_xc and v_xc of one length, given {}, {} and {}",
                rho.len(),
                exc.len(),
                vxc.len()
            )));
        }
        let (sigma, mut vsigma) = (vec![0.0; rho.len()], vec![0.0; rho.len()]);
        self.evaluate_gga(
            rho,
            &sigma,
            XcPoint {
                exc,
                vrho: vxc,
                vsigma: &mut vsigma,
            },
        )
    }

    /// ε_xc alone (libxc's energy-only entry points, cheaper than the potential's) at
    /// each density `rho` and, for a GGA, squared gradient `sigma`; thresholds as
    /// [`evaluate_gga`](Self::evaluate_gga). A GGA without `sigma`, or lengths that
    /// differ, are `PwError::Xc`.
    pub fn energy(&self, rho: &[f64], sigma: Option<&[f64]>, exc: &mut [f64]) -> Result<()> {
        let n = rho.len();
        let sig_len = sigma.map_or(n, |s| s.len());
        if exc.len() != n || sig_len != n {
            return Err(PwError::Xc(format!(
                "expected ρ, σ and ε_xc of one length, given {n}, {sig_len} and {}",
                exc.len()
            )));
        }
        if self.is_gga() && sigma.is_none() {
            return Err(PwError::Xc(format!(
                "expected σ = |∇ρ|² for the GGA {:?}, given none",
                self.name
            )));
        }
        exc.fill(0.0);
        let clean = non_negative(rho);
        let sig = sigma.map_or(Vec::new(), non_negative);
        let mut e = vec![0.0; n];
        for part in &self.parts {
            if part.gga {
                // SAFETY: `part.p` is an initialised unpolarised GGA; rho, sigma (checked
                // above to be present and of length n) and zk hold `n` doubles each.
                unsafe { xc_gga_exc(part.p, n, clean.as_ptr(), sig.as_ptr(), e.as_mut_ptr()) };
            } else {
                // SAFETY: `part.p` is an initialised unpolarised LDA; rho and zk hold `n`
                // doubles each.
                unsafe { xc_lda_exc(part.p, n, clean.as_ptr(), e.as_mut_ptr()) };
            }
            for i in 0..n {
                if clean[i] != 0.0 {
                    exc[i] += e[i];
                }
            }
        }
        for i in self.nan_inputs(rho, sigma) {
            exc[i] = f64::NAN;
        }
        Ok(())
    }

    /// The points whose density, or σ where a part reads it, is NaN: libxc's thresholds
    /// would turn them into zeros or finite values, so the callers set them to NaN.
    fn nan_inputs<'a>(
        &self,
        rho: &'a [f64],
        sigma: Option<&'a [f64]>,
    ) -> impl Iterator<Item = usize> + 'a {
        let gga = self.is_gga();
        (0..rho.len())
            .filter(move |&i| rho[i].is_nan() || (gga && sigma.is_some_and(|s| s[i].is_nan())))
    }

    /// ε_xc, ∂(ρ ε_xc)/∂ρ and ∂(ρ ε_xc)/∂σ at each density `rho` and squared gradient
    /// `sigma = |∇ρ|²` (bohr⁻⁸); LDA parts ignore `sigma` and add nothing to `vsigma`.
    /// Negative densities count as zero and give zero, as do those below libxc's
    /// thresholds; negative `sigma` counts as zero; a NaN density or σ gives NaN at its
    /// point. Lengths that differ are `PwError::Xc`.
    pub fn evaluate_gga(&self, rho: &[f64], sigma: &[f64], out: XcPoint<'_>) -> Result<()> {
        let n = rho.len();
        if [sigma.len(), out.exc.len(), out.vrho.len(), out.vsigma.len()] != [n; 4] {
            return Err(PwError::Xc(format!(
                "expected ρ, σ, ε_xc, v_ρ and v_σ of one length, given {n}, {}, {}, {} and {}",
                sigma.len(),
                out.exc.len(),
                out.vrho.len(),
                out.vsigma.len()
            )));
        }
        out.exc.fill(0.0);
        out.vrho.fill(0.0);
        out.vsigma.fill(0.0);
        let clean = non_negative(rho);
        let sig = non_negative(sigma);
        let (mut e, mut v, mut vs) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for part in &self.parts {
            if part.gga {
                // SAFETY: `part.p` is an initialised unpolarised GGA; the five arrays hold
                // `n` doubles each (one value per point of zk, vrho and vsigma when
                // unpolarised).
                unsafe {
                    xc_gga_exc_vxc(
                        part.p,
                        n,
                        clean.as_ptr(),
                        sig.as_ptr(),
                        e.as_mut_ptr(),
                        v.as_mut_ptr(),
                        vs.as_mut_ptr(),
                    )
                };
            } else {
                vs.fill(0.0);
                // SAFETY: `part.p` is an initialised unpolarised LDA; the three arrays
                // hold `n` doubles each.
                unsafe {
                    xc_lda_exc_vxc(part.p, n, clean.as_ptr(), e.as_mut_ptr(), v.as_mut_ptr())
                };
            }
            for i in 0..n {
                // Points of zero density give zero, whatever libxc writes there.
                if clean[i] == 0.0 {
                    continue;
                }
                out.exc[i] += e[i];
                out.vrho[i] += v[i];
                out.vsigma[i] += vs[i];
            }
        }
        for i in self.nan_inputs(rho, Some(sigma)) {
            out.exc[i] = f64::NAN;
            out.vrho[i] = f64::NAN;
            out.vsigma[i] = f64::NAN;
        }
        Ok(())
    }
}

impl Drop for Xc {
    fn drop(&mut self) {
        for part in &self.parts {
            // SAFETY: each `p` was initialised by xc_func_init and is freed once.
            unsafe {
                xc_func_end(part.p);
                xc_func_free(part.p);
            }
        }
    }
}

/// `x` with negative values (which a mixed density can have in tiny regions) as zero;
/// NaN stays NaN, so that it reaches the result rather than reading as no density.
fn non_negative(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| if v < 0.0 { 0.0 } else { v }).collect()
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
    use std::f64::consts::PI;

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
        xc.evaluate(&rho, &mut e, &mut v)?;
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
        t.evaluate(&rho, &mut e1, &mut v)?;
        pz.evaluate(&rho, &mut e2, &mut v)?;
        assert!((e1[0] - e2[0]).abs() > 1e-5 && (e1[0] - e2[0]).abs() < 1e-2);
        assert_eq!((e1[2], e1[3], v[2], v[3]), (0.0, 0.0, 0.0, 0.0));
        for bad in [
            "lda_nonsense",
            "hyb_gga_xc_b3lyp",
            "mgga_x_scan",
            "",
            "lda_x+\0",
        ] {
            let e = Xc::new(bad).err().expect(bad);
            assert!(e.to_string().starts_with("xc: expected"), "{e}");
        }
        Ok(())
    }

    /// PBE exchange from its closed form (Perdew, Burke, Ernzerhof 1996): f = ρ ε_x^LDA
    /// F(s²), F = 1 + κ − κ/(1 + μs²/κ), s² = σ/(4 k_F² ρ²), κ = 0.804,
    /// μ = β π²/3 with β = 0.06672455060314922; ε, ∂f/∂ρ and ∂f/∂σ differentiated by hand.
    fn pbe_exchange(rho: f64, sigma: f64) -> (f64, f64, f64) {
        let (kappa, mu) = (0.804, 0.06672455060314922 * PI * PI / 3.0);
        let a = -0.75 * (3.0 / PI).cbrt();
        let c = 1.0 / (4.0 * (3.0 * PI * PI).powf(2.0 / 3.0));
        let s2 = sigma * c * rho.powf(-8.0 / 3.0);
        let d = 1.0 + mu * s2 / kappa;
        let (f, df) = (1.0 + kappa - kappa / d, mu / (d * d));
        let e = a * rho.cbrt() * f;
        let vrho = a * rho.cbrt() * (4.0 / 3.0 * f - 8.0 / 3.0 * s2 * df);
        let vsigma = a * c * rho.powf(-4.0 / 3.0) * df;
        (e, vrho, vsigma)
    }

    #[test]
    fn pbe_exchange_is_the_closed_form_and_parts_add() -> Result<()> {
        // Densities 1e-4 … 10 and reduced gradients s from 0 to about 4.
        let (mut rho, mut sigma) = (Vec::new(), Vec::new());
        for i in 0..41 {
            for j in 0..9 {
                let r = 1e-4 * 10f64.powf(i as f64 / 8.0);
                let s = 0.5 * j as f64;
                let kf = (3.0 * PI * PI * r).cbrt();
                rho.push(r);
                sigma.push((2.0 * kf * r * s).powi(2));
            }
        }
        let n = rho.len();
        let eval = |xc: &Xc| -> Result<[Vec<f64>; 3]> {
            let mut out = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            let [e, v, vs] = &mut out;
            xc.evaluate_gga(
                &rho,
                &sigma,
                XcPoint {
                    exc: e,
                    vrho: v,
                    vsigma: vs,
                },
            )?;
            Ok(out)
        };
        let x = Xc::new("gga_x_pbe")?;
        assert!(x.is_gga());
        let [e, v, vs] = eval(&x)?;
        for p in 0..n {
            let (we, wv, wvs) = pbe_exchange(rho[p], sigma[p]);
            for (got, want, what) in [(e[p], we, "ε"), (v[p], wv, "v_ρ"), (vs[p], wvs, "v_σ")] {
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs(),
                    "{what} at ρ={} σ={}: {got} against {want}",
                    rho[p],
                    sigma[p]
                );
            }
        }
        // A sum of an LDA and a GGA: the LDA adds to ε and v_ρ, nothing to v_σ.
        let [el, vl, _] = eval(&Xc::new("lda_c_pw")?)?;
        let [es, v_s, vss] = eval(&Xc::new("gga_x_pbe+lda_c_pw")?)?;
        for p in 0..n {
            assert!((es[p] - (e[p] + el[p])).abs() <= 1e-15 * es[p].abs());
            assert!((v_s[p] - (v[p] + vl[p])).abs() <= 1e-15 * v_s[p].abs());
            assert_eq!(vss[p], vs[p]);
        }
        // gga_pbe is PBE exchange + correlation: different from exchange alone.
        let [ep, _, _] = eval(&Xc::new("gga_pbe")?)?;
        assert!(ep.iter().zip(&e).all(|(a, b)| a < b));
        Ok(())
    }

    #[test]
    fn a_gga_refuses_the_lda_entry_and_mismatched_lengths_are_errors() -> Result<()> {
        let pbe = Xc::new("gga_pbe")?;
        let (mut e, mut v) = ([0.0; 2], [0.0; 2]);
        let err = pbe.evaluate(&[0.1, 0.2], &mut e, &mut v).unwrap_err();
        assert!(err.to_string().contains("expected an LDA"), "{err}");
        let err = Xc::new("lda_pw")?
            .evaluate(&[0.1, 0.2], &mut e[..1], &mut v)
            .unwrap_err();
        assert!(err.to_string().contains("given 2, 1 and 2"), "{err}");
        let (mut e3, mut v3, mut vs3) = ([0.0; 2], [0.0; 2], [0.0; 3]);
        let err = pbe
            .evaluate_gga(
                &[0.1, 0.2],
                &[0.0; 2],
                XcPoint {
                    exc: &mut e3,
                    vrho: &mut v3,
                    vsigma: &mut vs3,
                },
            )
            .unwrap_err();
        assert!(err.to_string().contains("given 2, 2, 2, 2 and 3"), "{err}");
        // Zero and negative densities and a negative σ give zeros, not NaN.
        let (mut e, mut v, mut vs) = ([1.0; 3], [1.0; 3], [1.0; 3]);
        pbe.evaluate_gga(
            &[0.0, -1e-3, 0.05],
            &[1e-3, 1e-3, -1.0],
            XcPoint {
                exc: &mut e,
                vrho: &mut v,
                vsigma: &mut vs,
            },
        )?;
        assert_eq!(
            (e[0], e[1], v[0], v[1], vs[0], vs[1]),
            (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        );
        assert!(e[2] < 0.0 && v[2].is_finite() && vs[2].is_finite());
        // NaN in ρ or σ is NaN out at that point (not a zero that hides it), through both
        // entry points, and the other points are untouched by it.
        let rho = [0.05, f64::NAN, 0.05];
        let sigma = [1e-3, 1e-3, f64::NAN];
        pbe.evaluate_gga(
            &rho,
            &sigma,
            XcPoint {
                exc: &mut e,
                vrho: &mut v,
                vsigma: &mut vs,
            },
        )?;
        assert!(e[0].is_finite() && v[0].is_finite() && vs[0].is_finite());
        assert!(e[1].is_nan() && e[2].is_nan(), "{e:?}");
        let mut e2 = [0.0; 3];
        pbe.energy(&rho, Some(&sigma), &mut e2)?;
        assert!(e2[0] == e[0] && e2[1].is_nan() && e2[2].is_nan(), "{e2:?}");
        let lda = Xc::new("lda_teter93")?;
        let (mut el, mut vl) = ([0.0; 3], [0.0; 3]);
        lda.evaluate(&rho, &mut el, &mut vl)?;
        assert!(el[0].is_finite() && el[1].is_nan() && vl[1].is_nan() && el[2].is_finite());
        // No points: nothing to do, and no error.
        let empty: [f64; 0] = [];
        pbe.energy(&empty, Some(&empty), &mut [])?;
        lda.evaluate(&empty, &mut [], &mut [])?;
        Ok(())
    }
}
