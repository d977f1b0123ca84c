#!/usr/bin/env bash
# ctensor-pw against Quantum ESPRESSO 6.7's pw.x (Debian's quantum-espresso) on the same
# machine and cases: Si on the 4x4x4 mesh shifted by (1/2,1/2,1/2) (10 k-points after
# symmetry), Perdew-Zunger LDA, ecut 10/20/30 Ha, 8 bands, on one and two cores, best of
# 3; and GaAs with a GGA (PBE exchange, PW92 correlation) at 15 Ha, one core. pw.x runs
# the inputs of pw/tests/data/qe/cases.py with conv_thr 1e-11 Ry (Debian's pw.x is built
# for MPI without OpenMP, so two cores are `mpirun -np 2 pw.x -nk 2`, its k-point pools);
# ctensor-pw runs the same set-up with its defaults (|dE| < 1e-10 Ha, |rho_out - rho_in|
# < 1e-7, --threads = cores), on pw.x's FFT grid (its default; ABINIT's, ctensor-pw's
# default, is 30^3 instead of 32^3 for Si at 20 Ha and of 27^3 for GaAs). Whole-process wall
# time and peak memory (of the largest process for pw.x under mpirun). Prints a markdown
# table (also written to target/bench/pw-vs-qe.md). Both codes compute the forces and the
# stress at the end of each run (cases.py sets tprnfor and tstress; ctensor-pw's default).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v pw.x >/dev/null || { echo "pw-vs-qe: Quantum ESPRESSO is not installed (apt-get install quantum-espresso)"; exit 1; }
pw="$(CTENSOR_BUILD_QUIET=1 bash scripts/build-programs.sh)/release/ctensor-pw"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp pw/data/*.hgh pw/tests/data/qe/*.gth pw/tests/data/qe/cases.py "$work/"
mkdir -p target/bench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1

python3 - "$work" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
import cases
work = sys.argv[1]
names = ["si_k444h_e10_pz", "si_k444h_e20_pz", "si_k444h_e30_pz", "gaas_k444h_e15_pbx"]
for e in (10, 30):
    cases.CASES[f"si_k444h_e{e}_pz"] = ("si", e, [4, 4, 4], [1, 1, 1], "PZ", "lda_pz")
files = {"Si": "14si.4.hgh", "Ga": "31ga.3.hgh", "As": "33as.5.hgh"}
for name in names:
    text = cases.qe_input(name).replace("conv_thr = 1e-13", "conv_thr = 1e-11")
    open(f"{work}/{name}.in", "w").write(text)
    setup = cases.setup(name)
    setup["pseudopotentials"] = {a["species"]: files[a["species"]] for a in setup["atoms"]}
    json.dump(setup, open(f"{work}/{name}.json", "w"))
PY

# One row: NAME CORES REPS.
row() {
  local name=$1 c=$2 reps=$3 tq tp sq sp eq ep mq mp gq gp
  local qe=(env OMP_NUM_THREADS=1 pw.x -in "$name.in")
  [ "$c" -gt 1 ] && qe=(env OMP_NUM_THREADS=1 mpirun -np "$c" pw.x -nk "$c" -in "$name.in")
  tq=$(for i in $(seq "$reps"); do ( cd "$work" && rm -rf qe_tmp && /usr/bin/time -f "%e %M" "${qe[@]}" 2>&1 >"$name.log" | tail -1 ); done | sort -g | head -1)
  mq=${tq#* }; tq=${tq% *}
  sq=$(grep -Eo 'convergence has been achieved in +[0-9]+' "$work/$name.log" | awk '{print $NF}')
  eq=$(grep '^!' "$work/$name.log" | awk '{print $5}')
  gq=$(grep -Eo 'FFT dimensions: \( *[0-9]+' "$work/$name.log" | head -1 | awk '{print $NF}')
  # ctensor-pw on pw.x's grid: the same work, and the same numbers to 1e-8 Ha.
  python3 -c "
import json, re
d = json.load(open('$work/$name.json'))
d['fft_grid'] = [int(x) for x in re.search(r'FFT dimensions: \(([ 0-9,]+)\)', open('$work/$name.log').read()).group(1).split(',')]
json.dump(d, open('$work/$name.json', 'w'))"
  tp=$(for i in $(seq "$reps"); do /usr/bin/time -f "%e %M" "$pw" run "$work/$name.json" --output "$work/r.json" --quiet --threads "$c" 2>&1 >/dev/null | tail -1; done | sort -g | head -1)
  mp=${tp#* }; tp=${tp% *}
  read -r sp ep gp < <(python3 -c "import json; d=json.load(open('$work/r.json')); print(d['scf_iterations'], d['total_energy_ha'], d['fft_grid'][0])")
  python3 -c "
tq, sq, tp, sp, eq, ep, mq, mp = $tq, $sq, $tp, $sp, $eq / 2, $ep, $mq, $mp
print(f'| $name | $c | ${gp}³ | {tq:.2f} | {sq} | {tq/sq:.3f} | {mq/1024:.0f} | {tp:.2f} | {sp} | {tp/sp:.3f} | {mp/1024:.0f} | {tp/tq:.2f} | {abs(eq-ep):.1e} |')"
}

{
echo "| case | cores | grid | pw.x (s) | steps | s/step | MB | ctensor-pw (s) | steps | s/step | MB | ctensor-pw / pw.x | \|ΔE_tot\| (Ha) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for e in 10 20 30; do
  for c in 1 2; do row "si_k444h_e${e}_pz" "$c" 3; done
done
row gaas_k444h_e15_pbx 1 3
} | tee target/bench/pw-vs-qe.md
