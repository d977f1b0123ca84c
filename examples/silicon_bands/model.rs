//! The Cohen–Bergstresser empirical-pseudopotential model (Phys. Rev. 141, 789, 1966):
//! the 14 materials, the fcc G vectors of a plane-wave basis, V(G − G') and the dense
//! H(k), built with ctensor ops. Shared by the band-structure demo and the block
//! Davidson example (`examples/davidson/`), each of which uses a part of it.
#![allow(dead_code)]

use std::f64::consts::PI;

use ctensor::{c64, DataType, Result, Tensor};

pub const BOHR_ANGSTROM: f64 = 0.529177210903;
pub const RY_EV: f64 = 13.605693122994;

/// One material of the paper: lattice constant (Å) and form factors (Ry) at
/// |q|² = 3, 8, 11 (symmetric) and 3, 4, 11 (antisymmetric), in (2π/a)².
pub struct Material {
    /// The name used on the command line.
    pub name: &'static str,
    /// Lattice constant, Å.
    pub a: f64,
    /// Symmetric form factors, Ry.
    pub vs: [f64; 3],
    /// Antisymmetric form factors, Ry.
    pub va: [f64; 3],
}

pub const MATERIALS: [Material; 14] = [
    Material {
        name: "Si",
        a: 5.43,
        vs: [-0.21, 0.04, 0.08],
        va: [0.0, 0.0, 0.0],
    },
    Material {
        name: "Ge",
        a: 5.66,
        vs: [-0.23, 0.01, 0.06],
        va: [0.0, 0.0, 0.0],
    },
    Material {
        name: "Sn",
        a: 6.49,
        vs: [-0.20, 0.00, 0.04],
        va: [0.0, 0.0, 0.0],
    },
    Material {
        name: "GaP",
        a: 5.44,
        vs: [-0.22, 0.03, 0.07],
        va: [0.12, 0.07, 0.02],
    },
    Material {
        name: "GaAs",
        a: 5.64,
        vs: [-0.23, 0.01, 0.06],
        va: [0.07, 0.05, 0.01],
    },
    Material {
        name: "AlSb",
        a: 6.13,
        vs: [-0.21, 0.02, 0.06],
        va: [0.06, 0.04, 0.02],
    },
    Material {
        name: "InP",
        a: 5.86,
        vs: [-0.23, 0.01, 0.06],
        va: [0.07, 0.05, 0.01],
    },
    Material {
        name: "GaSb",
        a: 6.12,
        vs: [-0.22, 0.00, 0.05],
        va: [0.06, 0.05, 0.01],
    },
    Material {
        name: "InAs",
        a: 6.04,
        vs: [-0.22, 0.00, 0.05],
        va: [0.08, 0.05, 0.03],
    },
    Material {
        name: "InSb",
        a: 6.48,
        vs: [-0.20, 0.00, 0.04],
        va: [0.06, 0.05, 0.01],
    },
    Material {
        name: "ZnS",
        a: 5.41,
        vs: [-0.22, 0.03, 0.07],
        va: [0.24, 0.14, 0.04],
    },
    Material {
        name: "ZnSe",
        a: 5.65,
        vs: [-0.23, 0.01, 0.06],
        va: [0.18, 0.12, 0.03],
    },
    Material {
        name: "ZnTe",
        a: 6.07,
        vs: [-0.22, 0.00, 0.05],
        va: [0.13, 0.10, 0.01],
    },
    Material {
        name: "CdTe",
        a: 6.41,
        vs: [-0.20, 0.00, 0.04],
        va: [0.15, 0.09, 0.04],
    },
];

/// High-symmetry points in units of 2π/a.
/// All G = (h, k, l) of the fcc reciprocal lattice (h, k, l all even or all odd) with
/// |G + k|² ≤ cut, sorted by |G|².
pub fn g_vectors(cut: f64, k: [f64; 3]) -> Vec<[f64; 3]> {
    let r = cut.sqrt().ceil() as i32 + 2;
    let mut gs = Vec::new();
    for h in -r..=r {
        for kk in -r..=r {
            for l in -r..=r {
                let parity = (h & 1, kk & 1, l & 1);
                if parity != (0, 0, 0) && parity != (1, 1, 1) {
                    continue;
                }
                let g = [h as f64, kk as f64, l as f64];
                let q2: f64 = (0..3).map(|d| (g[d] + k[d]).powi(2)).sum();
                if q2 <= cut + 1e-9 {
                    gs.push(g);
                }
            }
        }
    }
    gs.sort_by(|a, b| {
        let n = |g: &[f64; 3]| g.iter().map(|x| x * x).sum::<f64>();
        n(a).partial_cmp(&n(b))
            .unwrap()
            .then(a.partial_cmp(b).unwrap())
    });
    gs
}

/// V(G − G') in Ry for the G vectors `g` (`[npw, 3]`, f64), built with tensor ops:
/// V(q) = V^S(|q|²) cos(q·τ) + i V^A(|q|²) sin(q·τ), τ = (a/8)(1, 1, 1).
pub fn potential(mat: &Material, g: &Tensor) -> Result<Tensor> {
    let n = g.dims()[0] as i64;
    let q = g.reshape(&[n, 1, 3])?.sub(&g.reshape(&[1, n, 3])?)?; // [n, n, 3]
    let q2 = q.mul(&q)?.sum(&[2])?; // |q|², integers in (2π/a)²
    let shells = |shell: [f64; 3], ff: [f64; 3]| -> Result<Tensor> {
        let mut v = Tensor::zeros(DataType::Double, g.device(), q2.dims())?;
        for (s, f) in shell.iter().zip(ff) {
            if f != 0.0 {
                v.add_(&q2.equal_scalar(*s)?.mul_scalar(f)?)?;
            }
        }
        Ok(v)
    };
    let vs = shells([3.0, 8.0, 11.0], mat.vs)?;
    let va = shells([3.0, 4.0, 11.0], mat.va)?;
    // q·τ = (π/4)(qx + qy + qz); e^{i q·τ} gives the cosine and the sine.
    let phase = q.sum(&[2])?.mul_scalar(PI / 4.0)?;
    let e = phase
        .cast(DataType::ComplexDouble)?
        .mul_scalar(c64::new(0.0, 1.0))?
        .exp()?;
    let (cos, sin) = (e.real()?, e.imag()?);
    let sym = vs.mul(&cos)?.cast(DataType::ComplexDouble)?;
    let anti = va
        .mul(&sin)?
        .cast(DataType::ComplexDouble)?
        .mul_scalar(c64::new(0.0, 1.0))?;
    sym.add(&anti)
}

/// `v` as a real (f64) tensor when its imaginary part is zero everywhere, else `v`.
///
/// This is checked, not assumed. With the origin at the bond centre, a diamond crystal
/// (Si, Ge, α-Sn) is centrosymmetric about it: its antisymmetric form factors vanish,
/// V(G) = V_S(G) cos(G·τ) is real, and so is every H(k), whose lowest eigenvalues a
/// real symmetric solver then finds at about half the cost of a complex Hermitian one.
/// A zinc-blende crystal (GaAs, ...) has no inversion centre and stays complex (the
/// demo's `symmetry` module makes its H(k) real, or splits it, at the k-points an
/// operation of its space group fixes).
pub fn real_if_real(v: &Tensor) -> Result<Tensor> {
    if !v.dtype().is_complex() {
        return Ok(v.share());
    }
    let imag = v.imag()?.contiguous()?.to_vec::<f64>()?;
    if imag.iter().all(|&x| x == 0.0) {
        v.real()?.contiguous()
    } else {
        Ok(v.share())
    }
}

/// H(k) = (2π/a)² |k + G|² δ + V(G − G') in Ry (in `v`'s dtype, f64 or c64, on the
/// device of `g` and `v`), for the G vectors `g` (`[npw, 3]`, f64), the potential `v` of
/// [`potential`] (or its real form, [`real_if_real`]) and the kinetic prefactor `kin` =
/// (2π/a)² with a in bohr.
pub fn hamiltonian(kin: f64, g: &Tensor, v: &Tensor, k: [f64; 3]) -> Result<Tensor> {
    let kt = Tensor::from_slice(&k, &[3])?.to_device(g.device())?;
    let kg = g.add(&kt)?;
    let t = kg.mul(&kg)?.sum(&[1])?.mul_scalar(kin)?.cast(v.dtype())?;
    // V plus the kinetic energies on its diagonal (a strided view of the copy).
    let h = v.try_clone()?;
    h.diagonal()?.add_(&t)?;
    Ok(h)
}

/// The kinetic prefactor (2π/a)² in Ry for a lattice constant `a` in Å.
pub fn kinetic_prefactor(mat: &Material) -> f64 {
    let a_bohr = mat.a / BOHR_ANGSTROM;
    (2.0 * PI / a_bohr).powi(2)
}
