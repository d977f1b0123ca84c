#!/usr/bin/env bash
# The band-structure demo's k-points/s against NumPy/SciPy on the same Hamiltonians.
# For Si (real H) and GaAs (complex H), 169 and 531 plane waves (--gcut 27 and 60), 1 and
# 2 threads: the demo's dense solver in double precision (zheevr/dsyevr for the lowest 8
# bands) and in mixed precision (c32/f32 solve refined in c64/f64, EigBackend::Mixed),
# its default (--precision auto: mixed for complex H of order >= 128, double otherwise)
# with and without the crystal's symmetry (--symmetry off: GaAs's complex H(k) solved
# as it is instead of in a symmetry-adapted basis where it is real or splits into two
# blocks), its Davidson + FFT solver, and bench/python/cb_bands.py (the same
# H(k) on the demo's own k-points, read from its bands.csv; scipy.linalg.eigh with
# driver "evr", OPENBLAS_NUM_THREADS = threads). The path has 10 points per segment; each
# rate is the best of 3 runs. Prints a markdown table, also written to
# target/bench/demo-vs-numpy.md. DEMO_MATERIALS, DEMO_GCUTS and DEMO_THREADS replace the
# default lists ("Si GaAs", "27 60", "1 2"), e.g. DEMO_MATERIALS="GaP ZnS CdTe".
#
# The demo runs with OPENBLAS_THREAD_TIMEOUT=4: OpenBLAS's worker threads spin for about
# 2^28 cycles after the library loads (and after each threaded call) before they sleep,
# and a run of a tenth of a second started meanwhile shares its cores with them (on 2
# threads, half the runs came out at 55-60 % of the others' rate). NumPy runs both with
# and without the setting, and keeps its best.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(bash scripts/py-env.sh)
demo="$(CTENSOR_BUILD_QUIET=1 bash scripts/build-programs.sh)/release/examples/silicon_bands"
out=target/bench/demo
mkdir -p "$out"
best() { sort -g | tail -1; }
rate() { grep -o '[0-9.]* k-points/s' | cut -d' ' -f1; }
table=target/bench/demo-vs-numpy.md
{
  echo "| material | plane waves | threads | dense, double | dense, mixed | default, no symmetry | default | Davidson + FFT | NumPy/SciPy | no symmetry / NumPy | default / NumPy |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} > "$table"
cat "$table"
for m in ${DEMO_MATERIALS:-Si GaAs}; do
  for g in ${DEMO_GCUTS:-27 60}; do
    for t in ${DEMO_THREADS:-1 2}; do
      dir="$out/$m-$g"
      run() { for _ in 1 2 3; do OPENBLAS_THREAD_TIMEOUT=4 "$demo" --material "$m" --gcut "$g" --points 10 --threads "$t" --out "$dir" "$@" | rate; done | best; }
      double=$(run --precision double)
      davidson=$(run --solver davidson)
      mixed=$(run --precision mixed)
      nosym=$(run --symmetry off)
      auto=$(run)
      npw=$("$demo" --material "$m" --gcut "$g" --points 1 --threads 1 --out "$dir.tmp" | grep -o '([0-9]* plane waves)' | tr -dc '0-9')
      numpy=$(for spin in "" 4; do for _ in 1 2 3; do OPENBLAS_THREAD_TIMEOUT=$spin OPENBLAS_NUM_THREADS=$t "$py" bench/python/cb_bands.py "$g" 0 8 "$m" "$dir/bands.csv" | grep -o 'kpoints_per_s=[0-9.]*' | cut -d= -f2; done; done | best)
      python3 -c "
d, x, s, a, v, n = $double, $mixed, $nosym, $auto, $davidson, $numpy
print(f'| $m | $npw | $t | {d:.1f} | {x:.1f} | {s:.1f} | {a:.1f} | {v:.1f} | {n:.1f} | {s / n:.2f} | {a / n:.2f} |')" | tee -a "$table"
    done
  done
done
