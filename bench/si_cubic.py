"""Diamond Si in a cubic supercell: the larger cells of bench/pw-vs-abinit.sh --large
and of the GPU run's 64-atom row (scripts/gpu-run.sh).

    python3 bench/si_cubic.py DIR NAME CELLS NK NBAND PSP [--abinit]

writes DIR/NAME.json (ctensor-pw's input: CELLS^3 conventional cells of 8 atoms,
a = 10.26 bohr, 15 Ha, an NK^3 Gamma-centred mesh, NBAND bands, PSP as Si's
pseudopotential path) and, with --abinit, DIR/NAME.abi (ABINIT's input of the same cell,
reading PSP from DIR).
"""
import itertools
import json
import sys

A = 10.26
CONV = [(0, 0, 0), (0, .5, .5), (.5, 0, .5), (.5, .5, 0),
        (.25, .25, .25), (.25, .75, .75), (.75, .25, .75), (.75, .75, .25)]


def write(work, name, cells, nk, nband, psp, abinit):
    atoms = [[(x[0] + i) / cells, (x[1] + j) / cells, (x[2] + k) / cells]
             for (i, j, k) in itertools.product(range(cells), repeat=3) for x in CONV]
    L = A * cells
    json.dump({"lattice_vectors_bohr": [[L, 0, 0], [0, L, 0], [0, 0, L]],
               "atoms": [{"species": "Si", "reduced": p} for p in atoms],
               "pseudopotentials": {"Si": psp}, "ecut_ha": 15.0, "nband": nband,
               "kmesh": {"ngkpt": [nk, nk, nk]}}, open(f"{work}/{name}.json", "w"))
    if not abinit:
        return
    xred = "\n".join(" ".join(f"{c:.10f}" for c in p) for p in atoms)
    open(f"{work}/{name}.abi", "w").write(f"""acell 3*{L}
rprim 1 0 0  0 1 0  0 0 1
ntypat 1
znucl 14
natom {len(atoms)}
typat {len(atoms)}*1
xred
{xred}
ixc 1
chkprim 0
maxnsym 2000
ecut 15
nband {nband}
occopt 1
kptopt 1
ngkpt {nk} {nk} {nk}
nshiftk 1
shiftk 0 0 0
nstep 100
tolvrs 1.0d-16
diemac 12.0
pp_dirpath "./"
pseudos "{psp}"
prtwf 0
prtden 0
prteig 0
""")


if __name__ == "__main__":
    work, name, cells, nk, nband, psp = sys.argv[1:7]
    write(work, name, int(cells), int(nk), int(nband), psp, "--abinit" in sys.argv[7:])
