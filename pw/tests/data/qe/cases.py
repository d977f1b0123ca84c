#!/usr/bin/env python3
"""The Quantum ESPRESSO cases: writes CASE.in (pw.x input) for each, and CASES, the
table extract.py reads to record how each case was set up.

    python3 cases.py            # writes the .in files here
"""
import json

SI_A, GAAS_A = 10.26, 10.68

# name: (material, ecut Ha, k mesh, shift, QE input_dft, ctensor-pw xc)
CASES = {
    "si_gamma_e10_pz": ("si", 10, [1, 1, 1], [0, 0, 0], "PZ", "lda_pz"),
    "si_gamma_e20_pz": ("si", 20, [1, 1, 1], [0, 0, 0], "PZ", "lda_pz"),
    "si_gamma_e30_pz": ("si", 30, [1, 1, 1], [0, 0, 0], "PZ", "lda_pz"),
    "si_k222_e10_pz": ("si", 10, [2, 2, 2], [0, 0, 0], "PZ", "lda_pz"),
    "si_k222_e20_pz": ("si", 20, [2, 2, 2], [0, 0, 0], "PZ", "lda_pz"),
    "si_k222_e30_pz": ("si", 30, [2, 2, 2], [0, 0, 0], "PZ", "lda_pz"),
    "si_k444h_e20_pz": ("si", 20, [4, 4, 4], [1, 1, 1], "PZ", "lda_pz"),
    "gaas_k222_e20_pz": ("gaas", 20, [2, 2, 2], [0, 0, 0], "PZ", "lda_pz"),
    "si_k444h_e20_pw": ("si", 20, [4, 4, 4], [1, 1, 1], "PW", "lda_pw"),
    # A GGA: PBE exchange with PW92 correlation (no gradient correction to it).
    "si_k222_e20_pbx": ("si", 20, [2, 2, 2], [0, 0, 0], "SLA PW PBX NOGC", "gga_x_pbe+lda_c_pw"),
    "gaas_k444h_e15_pbx": ("gaas", 15, [4, 4, 4], [1, 1, 1], "SLA PW PBX NOGC",
                           "gga_x_pbe+lda_c_pw"),
    # Forces: the second atom off its site, on one k-point (so no question of which
    # representatives the two codes pick from a star that the lower symmetry splits):
    # Γ for Si, and for GaAs the star of L = (½,½,½), which pw.x's `1 1 1 1 1 1` mesh
    # gives once the displaced atom leaves no rotation to fold it (at Γ alone that cell
    # has no gap, and pw.x does not converge with fixed occupations).
    "si_dist_gamma_e20_pz": ("si", 20, [1, 1, 1], [0, 0, 0], "PZ", "lda_pz"),
    "gaas_dist_l_e20_pz": ("gaas", 20, [1, 1, 1], [1, 1, 1], "PZ", "lda_pz"),
}
# The second atom's reduced position where it is not (1/4, 1/4, 1/4).
SECOND_ATOM = {
    "si_dist_gamma_e20_pz": [0.27, 0.26, 0.235],
    "gaas_dist_l_e20_pz": [0.255, 0.25, 0.242],
}
# Not a case: full PBE. pw.x's PBE correlation is built on the original PW92 LDA
# (a = 0.031091), libxc's GGA_C_PBE on the modified one (a = 0.0310907, more digits),
# which moves E_xc by 8e-7 Ha here; the same shift separates pw.x's 'PW' from libxc's
# lda_c_pw_mod. The cases above pair functionals that are the same formula on both sides.

SPECIES = {
    "si": [("Si", "28.0855", "14si.4.gth"), ("Si", None, None)],
    "gaas": [("Ga", "69.723", "31ga.3.gth"), ("As", "74.9216", "33as.5.gth")],
}


# The k-points where pw.x's mesh is a star the crystal's symmetry does not fold: as
# ctensor-pw's shifts of a 1x1x1 mesh.
K_STAR = {
    "gaas_dist_l_e20_pz": [[0.5, 0.5, 0.5], [0, 0, 0.5], [0, 0.5, 0], [0.5, 0, 0]],
}


def setup(name):
    """Lattice rows (bohr), atoms and k mesh as ctensor-pw's input spells them."""
    material, ecut, ngkpt, shift, _, xc = CASES[name]
    h = (SI_A if material == "si" else GAAS_A) / 2
    first, second = (s[0] for s in SPECIES[material])
    return {
        "lattice_vectors_bohr": [[0, h, h], [h, 0, h], [h, h, 0]],
        "atoms": [{"species": first, "reduced": [0, 0, 0]},
                  {"species": second, "reduced": SECOND_ATOM.get(name, [0.25, 0.25, 0.25])}],
        "ecut_ha": ecut,
        "nband": 8,
        "kmesh": {"ngkpt": ngkpt,
                  "shifts": K_STAR.get(name, [[s / 2 for s in shift]])},
        "xc": xc,
    }


def qe_input(name):
    material, ecut, ngkpt, shift, dft, _ = CASES[name]
    s = setup(name)
    species = [sp for sp in SPECIES[material] if sp[1]]
    cell = "\n".join(" ".join(f"{x:.10f}" for x in row) for row in s["lattice_vectors_bohr"])
    atoms = "\n".join(f"{a['species']} " + " ".join(f"{x}" for x in a["reduced"])
                      for a in s["atoms"])
    return f"""&control
  calculation = 'scf', prefix = '{name}', outdir = './qe_tmp', pseudo_dir = './'
  tprnfor = .true., tstress = .true.
/
&system
  ibrav = 0, nat = 2, ntyp = {len(species)}, ecutwfc = {2 * ecut}, nbnd = 8,
  occupations = 'fixed', input_dft = '{dft}'
/
&electrons
  conv_thr = 1e-13, diago_full_acc = .true.
/
ATOMIC_SPECIES
""" + "\n".join(f"{n} {m} {f}" for n, m, f in species) + f"""
CELL_PARAMETERS bohr
{cell}
ATOMIC_POSITIONS crystal
{atoms}
K_POINTS automatic
{' '.join(map(str, ngkpt))} {' '.join(map(str, shift))}
"""


if __name__ == "__main__":
    for name in CASES:
        with open(f"{name}.in", "w") as f:
            f.write(qe_input(name))
    print(json.dumps(list(CASES)))
