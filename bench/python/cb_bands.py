"""The NumPy/SciPy reference of the band-structure demo's dense solver: the same
Cohen-Bergstresser H(k) for Si (fixed basis |G|^2 <= gcut in (2 pi / a)^2, V(G - G')
built once, the kinetic diagonal per k-point) and scipy.linalg.eigh for the lowest
bands (driver "evr", as the demo's LapackEvr), over COUNT k-points from L to Gamma.

    python cb_bands.py GCUT COUNT BANDS

Prints "npw=<n> kpoints_per_s=<rate>". Threads come from OPENBLAS_NUM_THREADS.
"""

import math
import sys
import time

import numpy as np
import scipy.linalg

A_ANGSTROM = 5.43
BOHR = 0.529177210903
VS = {3: -0.21, 8: 0.04, 11: 0.08}  # Si's symmetric form factors, Ry


def main():
    gcut, count, bands = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
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
    vs = np.zeros(q2.shape)
    for shell, f in VS.items():
        vs[q2 == shell] = f
    v = (vs * np.cos(phase)).astype(np.complex128)
    kin = (2 * np.pi / (A_ANGSTROM / BOHR)) ** 2
    ks = [np.array([0.5, 0.5, 0.5]) * (1 - t) for t in np.linspace(0, 1, count)]
    start = time.perf_counter()
    for kp in ks:
        hk = v.copy()
        hk[np.diag_indices(npw)] += kin * ((g + kp) ** 2).sum(axis=1)
        scipy.linalg.eigh(hk, eigvals_only=True, subset_by_index=[0, bands - 1], driver="evr")
    rate = count / (time.perf_counter() - start)
    print(f"npw={npw} kpoints_per_s={rate}")


if __name__ == "__main__":
    main()
