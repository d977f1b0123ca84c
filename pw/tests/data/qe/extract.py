#!/usr/bin/env python3
"""Reads pw.x's data-file-schema.xml for each case and writes CASE.json: the case's
set-up (from cases.py, as ctensor-pw's input spells it) and what Quantum ESPRESSO
computed, in hartree at full precision: the total energy, the Hartree, XC and Ewald terms
(the only ones pw.x reports separately), the FFT grid, per irreducible k-point its
reduced coordinates, weight (normalised to 1), plane-wave count and eigenvalues, and the
forces (Ha/bohr, Cartesian, per atom) and the stress tensor (Ha/bohr³).

pw.x keeps the pseudopotentials' G = 0 constant Σα/Ω in the local potential, so its
eigenvalues are those of ABINIT's convention plus that constant; the JSON holds pw.x's
own numbers and the test applies the shift.

    python3 extract.py CASE [CASE ...]      # after pw.x has run each CASE.in here
"""
import json
import sys
import xml.etree.ElementTree as ET

from cases import CASES, setup


def floats(text):
    return [float(x) for x in text.split()]


def extract(name):
    root = ET.parse(f"qe_tmp/{name}.save/data-file-schema.xml").getroot()
    creator = root.find("general_info/creator")
    out = root.find("output")
    structure = out.find("atomic_structure")
    alat = float(structure.get("alat"))
    cell = [floats(structure.find(f"cell/a{i}").text) for i in (1, 2, 3)]
    energy = out.find("total_energy")
    grid = out.find("basis_set/fft_grid")
    kpoints = []
    total_weight = 0.0
    for ks in out.findall("band_structure/ks_energies"):
        k = ks.find("k_point")
        # k in Cartesian units of 2π/alat; reduced on the dual basis: k·a_j / alat.
        kc = floats(k.text)
        kred = [sum(kc[i] * a[i] for i in range(3)) / alat for a in cell]
        w = float(k.get("weight"))
        total_weight += w
        kpoints.append({
            "kred": [round(x, 12) + 0.0 for x in kred],
            "weight": w,
            "npw": int(ks.find("npw").text),
            "eigenvalues_ha": floats(ks.find("eigenvalues").text),
        })
    for k in kpoints:
        k["weight"] /= total_weight
    # Both in hartree atomic units in the XML; the forces atom by atom, the stress by rows.
    f = floats(out.find("forces").text)
    stress = floats(out.find("stress").text)
    if out.find("convergence_info/scf_conv/convergence_achieved").text != "true":
        raise SystemExit(f"{name}: pw.x did not converge")
    return {
        "case": name,
        "code": f"Quantum ESPRESSO {creator.get('VERSION')} (Debian package quantum-espresso 6.7), "
                "pw.x, HGH parameters from abinit-data's files via hgh_to_qe.py",
        "input": setup(name),
        "qe_input_dft": CASES[name][4],
        "fft_grid": [int(grid.get(f"nr{i}")) for i in (1, 2, 3)],
        "total_energy_ha": float(energy.find("etot").text),
        "energy_components_ha": {
            "hartree": float(energy.find("ehart").text),
            "xc": float(energy.find("etxc").text),
            "ewald": float(energy.find("ewald").text),
        },
        "kpoints": kpoints,
        "forces_ha_per_bohr": [f[3 * a:3 * a + 3] for a in range(len(f) // 3)],
        "stress_ha_per_bohr3": [stress[3 * i:3 * i + 3] for i in range(3)],
    }


if __name__ == "__main__":
    for name in sys.argv[1:]:
        with open(f"{name}.json", "w") as f:
            json.dump(extract(name), f, indent=1)
            f.write("\n")
