#!/usr/bin/env python3
"""Writes an ABINIT HGH pseudopotential (pspcod 3) in the form Quantum ESPRESSO's
pw.x reads from a `.gth` file (ABINIT's pspcod 10: the h_ij of each channel as a full
upper triangle instead of the diagonal alone).

The off-diagonal h_ij are the closed forms of Hartwigsen, Goedecker & Hutter,
PRB 58, 3641 (1998), eq. (6) and its table; the spin-orbit k_ij are written as zero
(neither code uses them here).

    python3 hgh_to_qe.py 14si.4.hgh > Si.gth
"""
import math
import sys


def off_diagonal(l, h):
    """(h12, h13, h23) of channel l from its diagonal h = (h11, h22, h33)."""
    _, h22, h33 = h
    if l == 0:
        return (-0.5 * math.sqrt(3 / 5) * h22,
                0.5 * math.sqrt(5 / 21) * h33,
                -0.5 * math.sqrt(100 / 63) * h33)
    if l == 1:
        return (-0.5 * math.sqrt(5 / 7) * h22,
                math.sqrt(35 / 11) / 6 * h33,
                -14 / math.sqrt(11) / 6 * h33)
    if l == 2:
        return (-0.5 * math.sqrt(7 / 9) * h22,
                0.5 * math.sqrt(63 / 143) * h33,
                -0.5 * 18 / math.sqrt(143) * h33)
    if h22 or h33:
        raise SystemExit(f"channel l = {l} with more than one projector is not handled")
    return (0.0, 0.0, 0.0)


def main(path):
    lines = open(path).read().splitlines()
    znucl, zion, pspdat = lines[1].split()[:3]
    pspcod, pspxc, lmax, lloc, mmax, r2well = lines[2].split()[:6]
    if pspcod != "3":
        raise SystemExit(f"{path}: expected pspcod 3, found {pspcod}")
    rloc, *c = (float(x) for x in lines[3].split()[:5])
    nc = max((i + 1 for i, x in enumerate(c) if x != 0.0), default=0)
    channels = []
    row = 4
    for l in range(int(lmax) + 1):
        r, *h = (float(x) for x in lines[row].split()[:4])
        row += 1 if l == 0 else 2  # l > 0 is followed by its k_ij line
        n = max((i + 1 for i, x in enumerate(h) if x != 0.0), default=0)
        channels.append((l, r, n, h, off_diagonal(l, h)))
    print(f"{lines[0].strip()} (pspcod 10 form for pw.x)")
    print(f"{znucl} {zion} {pspdat} zatom,zion,pspdat")
    print(f"10 {pspxc} {lmax} {lloc} {mmax} {r2well} pspcod,pspxc,lmax,lloc,mmax,r2well")
    print(f"{rloc:.6f} {nc} " + " ".join(f"{x:.6f}" for x in c[:nc]) + " rloc nc c1..")
    print(f"{len(channels)} nnonloc")
    for l, r, n, h, (h12, h13, h23) in channels:
        full = [[h[0], h12, h13], [h12, h[1], h23], [h13, h23, h[2]]]
        print(f"{r:.6f} {n} " + " ".join(f"{full[0][j]:.15f}" for j in range(n)))
        for i in range(1, n):
            print(" ".join(f"{full[i][j]:.15f}" for j in range(i, n)))
        if l > 0:
            for i in range(n):
                print(" ".join("0.0" for _ in range(i, n)))


if __name__ == "__main__":
    main(sys.argv[1])
