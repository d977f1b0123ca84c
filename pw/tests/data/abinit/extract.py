#!/usr/bin/env python3
"""Turn ABINIT 9.6.2 runs of the inputs in this folder into the JSON references the
ctensor-pw tests read. Run from this folder after the ABINIT runs (see README.md here):
reads CASE.abo (the energy terms, printed to 14 digits) and CASE_o_GSR.nc through
`ncdump` (k-points, weights, plane-wave counts, eigenvalues and symmetry operations at
full precision, the Cartesian stress tensor, and the Cartesian forces of an input with
`optforces 1`) and writes CASE.json."""
import json, re, subprocess, sys

TERMS = {"kinetic": "kinetic", "hartree": "hartree", "xc": "xc", "Ewald energy": "ewald",
         "psp_core": "psp_core", "local_psp": "local_psp", "non_local_psp": "nonlocal_psp",
         "total_energy": "total"}

def ncvar(path, name):
    out = subprocess.run(["ncdump", "-p", "17,17", "-v", name, path],
                         capture_output=True, text=True, check=True).stdout
    body = out.split("data:")[1].split(name + " =", 1)[1].split(";")[0]
    return [float(x) for x in body.replace("\n", " ").split(",") if x.strip()]

def main(case):
    abo = open(case + ".abo").read()
    block = abo.split("--- !EnergyTerms")[-1].split("...")[0]
    energies = {}
    for line in block.splitlines():
        m = re.match(r"^(.+?)\s*:\s*([-+0-9.E]+)\s*$", line)
        if m and m.group(1) in TERMS:
            energies[TERMS[m.group(1)]] = float(m.group(2))
    gsr = case + "o_GSR.nc"
    nk = int(ncvar(gsr, "number_of_coefficients").__len__())
    kred = ncvar(gsr, "reduced_coordinates_of_kpoints")
    wts = ncvar(gsr, "kpoint_weights")
    npw = ncvar(gsr, "number_of_coefficients")
    eig = ncvar(gsr, "eigenvalues")
    nb = len(eig) // nk
    sym = ncvar(gsr, "reduced_symmetry_matrices")
    tnons = ncvar(gsr, "reduced_symmetry_translations")
    nsym = len(sym) // 9
    ngfft = re.search(r"^\s+ngfft\s+(\d+)\s+(\d+)\s+(\d+)", abo, re.M).groups()
    ecut = float(re.search(r"^\s+ecut\s+([0-9.E+-]+)", abo, re.M).group(1))
    ref = {
        "case": case,
        "code": "ABINIT 9.6.2 (Debian package abinit 9.6.2-1), HGH pseudopotentials from abinit-data",
        "ecut_ha": ecut,
        "fft_grid": [int(x) for x in ngfft],
        "total_energy_ha": energies.pop("total"),
        "energy_components_ha": energies,
        "kpoints": [{"kred": kred[3 * i:3 * i + 3], "weight": wts[i], "npw": int(npw[i]),
                     "eigenvalues_ha": eig[nb * i:nb * i + nb]} for i in range(nk)],
        "symmetry_rotations_reduced": [[sym[9 * s + 3 * r:9 * s + 3 * r + 3] for r in range(3)]
                                       for s in range(nsym)],
        "symmetry_translations_reduced": [tnons[3 * s:3 * s + 3] for s in range(nsym)],
    }
    # Voigt order xx, yy, zz, yz, xz, xy (Ha/bohr^3), as a symmetric 3x3 matrix.
    v = ncvar(gsr, "cartesian_stress_tensor")
    ref["cartesian_stress_tensor_ha_per_bohr3"] = [[v[0], v[5], v[4]], [v[5], v[1], v[3]],
                                                   [v[4], v[3], v[2]]]
    if re.search(r"^\s*optforces\s+1", open(case + ".abi").read(), re.M):
        f = ncvar(gsr, "cartesian_forces")
        ref["cartesian_forces_ha_per_bohr"] = [f[3 * a:3 * a + 3] for a in range(len(f) // 3)]
    with open(case + ".json", "w") as f:
        json.dump(ref, f, indent=1)

if __name__ == "__main__":
    for case in sys.argv[1:]:
        main(case)
