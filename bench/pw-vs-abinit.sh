#!/usr/bin/env bash
# ctensor-pw against ABINIT 9.6.2 on the same machine, same cases, same thread counts.
# Default: Si, shifted 4x4x4 Monkhorst-Pack mesh (256 points, 10 after symmetry), ecut
# 10/20/30 Ha, 8 bands, on 1 and 2 threads, best of 3, the 20 Ha case with PBE, and a
# molecule (Si2 in a box; LDA and PBE, one thread), and hexagonal 2H Si (12 Ha, 4x4x2). ABINIT runs the committed inputs
# pw/tests/data/abinit/si_mp444_e*.abi (tolvrs 1e-16, OMP_NUM_THREADS = threads);
# ctensor-pw runs the same crystal with its defaults (|dE| < 1e-10 Ha and
# |rho_out - rho_in| < 1e-7). With --large: the 8-atom cubic cell on a 4x4x4 mesh and the
# 64-atom supercell at Gamma, ecut 15 Ha, one thread, one run each (minutes), with peak
# memory; there ABINIT chooses its own istwfk (real wavefunctions at Gamma and the other
# time-reversal-invariant k-points), as ctensor-pw uses real bands at Gamma. Whole-process wall time. Prints a markdown table (also written to
# target/bench/pw-vs-abinit.md or pw-vs-abinit-large.md). Both codes compute the forces and
# the stress at the end of each run (ABINIT's default, and ctensor-pw's).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v abinit >/dev/null || { echo "pw-vs-abinit: ABINIT is not installed (apt-get install abinit abinit-data)"; exit 1; }
pw="$(CTENSOR_BUILD_QUIET=1 bash scripts/build-programs.sh)/release/ctensor-pw"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp pw/data/14si.4.hgh "$work/"
mkdir -p target/bench
best() { sort -g | head -1; }

# One row: NAME THREADS REPS (inputs $work/NAME.abi and $work/NAME.json).
row() {
  local name=$1 t=$2 reps=$3 ta tp sa sp ea ep ma mp
  ta=$(for i in $(seq "$reps"); do ( cd "$work" && rm -f "$name".abo* "${name}o_"* && /usr/bin/time -f "%e %M" env OMP_NUM_THREADS="$t" abinit "$name.abi" 2>&1 >/dev/null | tail -1 ); done | sort -g | head -1)
  ma=${ta#* }; ta=${ta% *}
  sa=$(grep -Ec '^ ETOT +[0-9]+' "$work/$name.abo")
  ea=$(grep 'total_energy  ' "$work/$name.abo" | tail -1 | awk '{print $3}')
  tp=$(for i in $(seq "$reps"); do /usr/bin/time -f "%e %M" "$pw" run "$work/$name.json" --output "$work/r.json" --quiet --threads "$t" 2>&1 >/dev/null | tail -1; done | sort -g | head -1)
  mp=${tp#* }; tp=${tp% *}
  read -r sp ep < <(python3 -c "import json; d=json.load(open('$work/r.json')); print(d['scf_iterations'], d['total_energy_ha'])")
  python3 -c "
ta, sa, tp, sp, ea, ep, ma, mp = $ta, $sa, $tp, $sp, $ea, $ep, $ma, $mp
print(f'| $name | $t | {ta:.2f} | {sa} | {ta/sa:.3f} | {ma/1024:.0f} | {tp:.2f} | {sp} | {tp/sp:.3f} | {mp/1024:.0f} | {tp/ta:.2f} | {abs(ea-ep):.1e} |')"
}

header() {
  echo "| case | threads | ABINIT (s) | steps | s/step | MB | ctensor-pw (s) | steps | s/step | MB | ctensor-pw / ABINIT | \|ΔE_tot\| (Ha) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
}

if [ "${1:-}" = --large ]; then
  python3 bench/si_cubic.py "$work" si8_k444_e15 1 4 20 14si.4.hgh --abinit
  python3 bench/si_cubic.py "$work" si64_gamma_e15 2 1 132 14si.4.hgh --abinit
  { header; row si8_k444_e15 1 1; row si64_gamma_e15 1 1; } | tee target/bench/pw-vs-abinit-large.md
  exit 0
fi

{
header
for e in 10 20 30; do
  cp "pw/tests/data/abinit/si_mp444_e$e.abi" "$work/"
  python3 - "$e" "$work/si_mp444_e$e.json" <<'PY'
import json, sys
e, path = float(sys.argv[1]), sys.argv[2]
d = json.load(open("pw/examples/si.json"))
d["ecut_ha"] = e
d["pseudopotentials"] = {"Si": "14si.4.hgh"}
d.pop("band_path", None)
json.dump(d, open(path, "w"))
PY
  for t in 1 2; do row "si_mp444_e$e" "$t" 3; done
done
# PBE (a GGA): the 20 Ha case with libxc's PBE on both sides (ABINIT's ixc -101130).
sed 's/^ixc 1$/ixc -101130/' "$work/si_mp444_e20.abi" > "$work/si_mp444_e20_pbe.abi"
python3 -c "
import json; d = json.load(open('$work/si_mp444_e20.json')); d['xc'] = 'gga_pbe'
json.dump(d, open('$work/si_mp444_e20_pbe.json', 'w'))"
for t in 1 2; do row si_mp444_e20_pbe "$t" 3; done
# A molecule in vacuum: Si2 in a 14-bohr box at Gamma, 10 Ha, LDA and PBE, one thread.
# ABINIT chooses its own istwfk (real wavefunctions at Gamma, as ctensor-pw); both sides
# use the bounded model preconditioner with dielectric constant 2 (ABINIT's diemac 2).
for case in si2_box_e10 si2_box_e10_pbe; do
  sed '/^istwfk/d' "pw/tests/data/abinit/$case.abi" > "$work/$case.abi"
  xc=lda_teter93; case $case in *_pbe) xc=gga_pbe;; esac
  python3 -c "
import json
json.dump({'lattice_vectors_bohr': [[14, 0, 0], [0, 14, 0], [0, 0, 14]],
           'atoms': [{'species': 'Si', 'reduced': [0, 0, 0]}, {'species': 'Si', 'reduced': [0.16, 0.1, 0.05]}],
           'pseudopotentials': {'Si': '14si.4.hgh'}, 'ecut_ha': 10, 'nband': 6,
           'kmesh': {'ngkpt': [1, 1, 1]}, 'xc': '$xc', 'scf': {'dielectric_constant': 2.0}},
          open('$work/$case.json', 'w'))"
  row "$case" 1 3
done
# A hexagonal cell: 2H Si (four atoms, 24 operations), 12 Ha, 12 bands, the 4x4x2 mesh
# shifted by (0, 0, 1/2), 1 and 2 threads. ABINIT runs the test reference's input with
# its own default line steps and istwfk (the reference's nline 30 only converges the top
# empty bands further).
sed -e '/^#/d' -e '/^istwfk/d' -e '/^nline/d' pw/tests/data/abinit/si_hex_k442_e12.abi > "$work/si_hex_k442_e12.abi"
python3 -c "
import json
a, t = 7.26, 1 / 3
json.dump({'lattice_vectors_bohr': [[a, 0, 0], [-0.5 * a, 0.8660254037844386 * a, 0], [0, 0, 1.65 * a]],
           'atoms': [{'species': 'Si', 'reduced': r} for r in [[t, 2 * t, 0.0628], [2 * t, t, 0.5628], [t, 2 * t, 0.4372], [2 * t, t, 0.9372]]],
           'pseudopotentials': {'Si': '14si.4.hgh'}, 'ecut_ha': 12, 'nband': 12,
           'kmesh': {'ngkpt': [4, 4, 2], 'shifts': [[0, 0, 0.5]]}},
          open('$work/si_hex_k442_e12.json', 'w'))"
for t in 1 2; do row si_hex_k442_e12 "$t" 3; done
} | tee target/bench/pw-vs-abinit.md
