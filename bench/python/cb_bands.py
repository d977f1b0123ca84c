"""The NumPy/SciPy reference of the band-structure demo's dense solver: the same
Cohen-Bergstresser H(k) (fixed basis |G|^2 <= gcut in (2 pi / a)^2, V(G - G') built once,
the kinetic diagonal per k-point) and scipy.linalg.eigh for the lowest bands (driver
"evr", as the demo's LapackEvr).

    python cb_bands.py GCUT COUNT BANDS [MATERIAL [CSV]]

MATERIAL is one of the demo's 14 (default Si). The k-points are COUNT points from L to
Gamma, or, with CSV, the kx, ky, kz columns of the demo's bands.csv (its own path; COUNT
is then ignored). Prints "npw=<n> kpoints_per_s=<rate> seconds=<s>". Threads come from
OPENBLAS_NUM_THREADS.
"""

import csv
import math
import sys
import time

import numpy as np
import scipy.linalg

BOHR = 0.529177210903
# Cohen & Bergstresser, Phys. Rev. 141, 789 (1966): lattice constant (angstrom),
# symmetric form factors at |q|^2 = 3, 8, 11 and antisymmetric ones at 3, 4, 11 (Ry).
MATERIALS = {
    "Si": (5.43, (-0.21, 0.04, 0.08), (0.0, 0.0, 0.0)),
    "Ge": (5.66, (-0.23, 0.01, 0.06), (0.0, 0.0, 0.0)),
    "Sn": (6.49, (-0.20, 0.00, 0.04), (0.0, 0.0, 0.0)),
    "GaP": (5.44, (-0.22, 0.03, 0.07), (0.12, 0.07, 0.02)),
    "GaAs": (5.64, (-0.23, 0.01, 0.06), (0.07, 0.05, 0.01)),
    "AlSb": (6.13, (-0.21, 0.02, 0.06), (0.06, 0.04, 0.02)),
    "InP": (5.86, (-0.23, 0.01, 0.06), (0.07, 0.05, 0.01)),
    "GaSb": (6.12, (-0.22, 0.00, 0.05), (0.06, 0.05, 0.01)),
    "InAs": (6.04, (-0.22, 0.00, 0.05), (0.08, 0.05, 0.03)),
    "InSb": (6.48, (-0.20, 0.00, 0.04), (0.06, 0.05, 0.01)),
    "ZnS": (5.41, (-0.22, 0.03, 0.07), (0.24, 0.14, 0.04)),
    "ZnSe": (5.65, (-0.23, 0.01, 0.06), (0.18, 0.12, 0.03)),
    "ZnTe": (6.07, (-0.22, 0.00, 0.05), (0.13, 0.10, 0.01)),
    "CdTe": (6.41, (-0.20, 0.00, 0.04), (0.15, 0.09, 0.04)),
}


def main():
    gcut, count, bands = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    name = sys.argv[4] if len(sys.argv) > 4 else "Si"
    a_angstrom, sym, anti = MATERIALS[name]
    r = int(math.ceil(math.sqrt(gcut))) + 2
    h, k, l = np.meshgrid(*(np.arange(-r, r + 1),) * 3, indexing="ij")
    g = np.stack([h.ravel(), k.ravel(), l.ravel()], axis=1)
    parity = g % 2
    fcc = np.all(parity == parity[:, :1], axis=1)
    g = g[fcc & ((g**2).sum(axis=1) <= gcut + 1e-9)].astype(float)
    npw = len(g)
    q = g[:, None, :] - g[None, :, :]
    q2 = np.rint((q**2).sum(axis=2)).astype(int)
    phase = np.pi / 4 * q.sum(axis=2)
    vs, va = np.zeros(q2.shape), np.zeros(q2.shape)
    for shell, f in zip((3, 8, 11), sym):
        vs[q2 == shell] = f
    for shell, f in zip((3, 4, 11), anti):
        va[q2 == shell] = f
    v = vs * np.cos(phase) + 1j * va * np.sin(phase)
    kin = (2 * np.pi / (a_angstrom / BOHR)) ** 2
    if len(sys.argv) > 5:
        with open(sys.argv[5], newline="") as f:
            ks = [np.array([float(row[c]) for c in ("kx", "ky", "kz")]) for row in csv.DictReader(f)]
    else:
        ks = [np.array([0.5, 0.5, 0.5]) * (1 - t) for t in np.linspace(0, 1, count)]
    start = time.perf_counter()
    for kp in ks:
        hk = v.copy()
        hk[np.diag_indices(npw)] += kin * ((g + kp) ** 2).sum(axis=1)
        scipy.linalg.eigh(hk, eigvals_only=True, subset_by_index=[0, bands - 1], driver="evr")
    seconds = time.perf_counter() - start
    print(f"npw={npw} kpoints_per_s={len(ks) / seconds} seconds={seconds}")


if __name__ == "__main__":
    main()
