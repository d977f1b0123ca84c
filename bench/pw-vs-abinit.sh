#!/usr/bin/env bash
# ctensor-pw against ABINIT 9.6.2 on the same machine, same cases, same thread counts:
# Si, shifted 4x4x4 Monkhorst-Pack mesh (256 points, 10 after symmetry), ecut 10/20/30 Ha,
# 8 bands. ABINIT runs the committed inputs pw/tests/data/abinit/si_mp444_e*.abi
# (tolvrs 1e-16, OMP_NUM_THREADS = threads); ctensor-pw runs the same crystal with its
# defaults (|dE| < 1e-10 Ha and |rho_out - rho_in| < 1e-7). Whole-process wall time, best
# of 3, and time per SCF step. Prints a markdown table (and writes it to
# target/bench/pw-vs-abinit.md).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v abinit >/dev/null || { echo "pw-vs-abinit: ABINIT is not installed (apt-get install abinit abinit-data)"; exit 1; }
cargo build -q --release -p ctensor-pw
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp pw/data/14si.4.hgh "$work/"
mkdir -p target/bench
best() { sort -g | head -1; }
out=target/bench/pw-vs-abinit.md
{
echo "| ecut (Ha) | threads | ABINIT (s) | ABINIT steps | ABINIT s/step | ctensor-pw (s) | ctensor-pw steps | ctensor-pw s/step | ctensor-pw / ABINIT | \|ΔE_tot\| (Ha) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for e in 10 20 30; do
  cp "pw/tests/data/abinit/si_mp444_e$e.abi" "$work/"
  python3 - "$e" "$work/si_$e.json" <<'PY'
import json, sys
e, path = float(sys.argv[1]), sys.argv[2]
d = json.load(open("pw/examples/si.json"))
d["ecut_ha"] = e
d["pseudopotentials"] = {"Si": "14si.4.hgh"}
json.dump(d, open(path, "w"))
PY
  for t in 1 2; do
    ta=$(for i in 1 2 3; do ( cd "$work" && rm -f si_mp444_e${e}o_* && /usr/bin/time -f %e env OMP_NUM_THREADS=$t abinit si_mp444_e$e.abi 2>&1 >/dev/null | tail -1 ); done | best)
    sa=$(grep -c 'ETOT ' "$work/si_mp444_e$e.abo" || true)
    [ "$sa" -gt 0 ] || sa=$(grep -Ec '^ ETOT +[0-9]+' "$work/si_mp444_e$e.abo")
    ea=$(grep 'total_energy  ' "$work/si_mp444_e$e.abo" | tail -1 | awk '{print $3}')
    tp=$(for i in 1 2 3; do /usr/bin/time -f %e target/release/ctensor-pw run "$work/si_$e.json" --output "$work/r.json" --quiet --threads $t 2>&1 >/dev/null | tail -1; done | best)
    read -r sp ep < <(python3 -c "import json; d=json.load(open('$work/r.json')); print(d['scf_iterations'], d['total_energy_ha'])")
    python3 -c "
ta, sa, tp, sp, ea, ep = $ta, $sa, $tp, $sp, $ea, $ep
print(f'| $e | $t | {ta:.2f} | {sa} | {ta/sa:.3f} | {tp:.2f} | {sp} | {tp/sp:.3f} | {tp/ta:.2f} | {abs(ea-ep):.1e} |')"
  done
done
} | tee "$out"
