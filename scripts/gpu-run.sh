#!/usr/bin/env bash
# The run half of a GPU run (see scripts/gpu-check.sh): unpacks .device/gpu/bundle.tar.xz
# and runs on the GPU machine first ctensor-pw's SCF with --device gpu against --device cpu,
# then every test binary, one binary at a time and with one test thread, so a sticky CUDA
# fault is blamed on the test that caused it; then the bench's GPU tables. Run from the
# repository root (the tests read files of the tree). Exit status 1 when a step failed.
#
# Output goes to $OUT (or /tmp/ctensor-gpu) as four files, written as the run goes so a
# run cut short still leaves what it did: gpu.txt (the GPU, driver and CUDA libraries
# found), summary.txt (one line per binary), tests.log (every binary's output, one after
# the other) and bench.log.
#
# Environment: GPU_RUN_ONLY=<extended regex> runs only the binaries whose name matches;
# GPU_RUN_BENCH=0 skips the bench; GPU_RUN_ARGS is passed to every test binary (e.g. a
# test-name filter); GPU_RUN_PW=0 skips ctensor-pw's SCF comparison; GPU_RUN_LARGE=1 adds
# the 64-atom cell on the GPU and the CPU (below). The device tool allows 600 s a command:
# GPU_RUN_ONLY='^$' GPU_RUN_BENCH=0 GPU_RUN_LARGE=1 runs the two ctensor-pw steps alone.
#
# cudarc looks the CUDA libraries up by unversioned name or by major versions 9 to 12. A
# machine with only CUDA 13 has libcublas.so.13 and libcusolver.so.12 (cuSOLVER's own
# numbering): the script finds the newest of each (cuBLAS, cuBLASLt, cuSOLVER, cuFFT)
# and links it under the unversioned name in a private folder put first on
# LD_LIBRARY_PATH; gpu.txt reports each, or "not found" (the FFT tests then fail with
# cuFFT's DeviceUnavailable instead of a silent skip).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs="${OUT:-/tmp/ctensor-gpu}"
mkdir -p "$logs"
work=$(mktemp -d)
tar -C "$work" -xJf "$here/bundle.tar.xz"
# NVRTC: the archive of gpu-check.sh where it was carried here, else the machine's own.
if [ -e "$here/../nvrtc/nvrtc.tar.xz" ]; then
  tar -C "$work/lib" -xJf "$here/../nvrtc/nvrtc.tar.xz"
fi

# Tests that read files of the tree (the C header, the kernel sources) find it by the path
# it had where they were built: point that path here when it is free.
root=$(cat "$work/build-root.txt")
if [ "$root" != "$PWD" ] && [ ! -e "$root" ]; then
  mkdir -p "$(dirname "$root")" && ln -s "$PWD" "$root" || echo "gpu-run: cannot link $root here" >&2
fi

# ctensor-pw where its tests look for it (the build path of target/release).
if [ -x "$work/tools/ctensor-pw" ] && [ ! -e "$root/target/release/ctensor-pw" ]; then
  mkdir -p "$root/target/release" && ln -s "$work/tools/ctensor-pw" "$root/target/release/ctensor-pw"
fi
links="$work/cuda-links"
mkdir -p "$links"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 || true
  # NVRTC: the carried one where .device/nvrtc came along, else the machine's own.
  libs="libcublas libcublasLt libcusolver libcufft"
  if [ -e "$work/lib/libnvrtc.so.12" ]; then
    echo "libnvrtc: $work/lib/libnvrtc.so.12 (from .device/nvrtc)"
  else
    libs="$libs libnvrtc"
  fi
  for lib in $libs; do
    # Every copy on the machine, newest major version last.
    found=$( { ldconfig -p 2>/dev/null | awk '{print $NF}'
               find /usr /opt -name "$lib.so.*" 2>/dev/null
             } | grep -E "/$lib\.so\.[0-9]+$" | awk -F. '{print $NF, $0}' | sort -n | tail -1 | cut -d' ' -f2-)
    if [ -n "$found" ]; then
      ln -sf "$found" "$links/$lib.so"
      echo "$lib: $found"
    else
      echo "$lib: not found"
    fi
  done
  [ -e "$work/lib/libnvrtc.so.12" ] || [ -e "$links/libnvrtc.so" ] \
    || echo "  (no NVRTC: carry .device/nvrtc from gpu-check.sh too, and run again)"
} > "$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"
export LD_LIBRARY_PATH="$links:$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CTENSOR_REQUIRE_GPU=1 RUST_BACKTRACE=1

failed=0
: > "$logs/summary.txt"
: > "$logs/tests.log"
# First, the Kohn-Sham SCF on the GPU against the CPU (Si, shifted 4x4x4, 10 Ha): the total
# energies must agree to 1e-8 Ha. It runs before the test binaries, so that a run cut short
# by the device's time limit (600 s a command) still has its answer.
if [ -x "$work/tools/ctensor-pw" ] && [ "${GPU_RUN_PW:-1}" != 0 ]; then
  {
    for dev in cpu gpu; do
      timeout 300 "$work/tools/ctensor-pw" run pw/examples/si.json --device $dev --output "$logs/pw-$dev.json" 2>&1
    done
  } > "$logs/pw.log" 2>&1
  if python3 -c "
import json, sys
rc, rg = (json.load(open('$logs/pw-%s.json' % d)) for d in ('cpu', 'gpu'))
c, g = rc['total_energy_ha'], rg['total_energy_ha']
terms = max(abs(rc['energy_components_ha'][t] - rg['energy_components_ha'][t]) for t in rc['energy_components_ha'])
eig = max(abs(a - b) for kc, kg in zip(rc['kpoints'], rg['kpoints'])
          for a, b in zip(kc['eigenvalues_ha'], kg['eigenvalues_ha']))
print('ctensor-pw cpu %.12f gpu %.12f diff %.2e; terms %.2e, eigenvalues %.2e; %.2f s vs %.2f s'
      % (c, g, abs(c - g), terms, eig, rc['wall_time_s'], rg['wall_time_s']))
sys.exit(0 if abs(c - g) < 1e-8 else 1)" >> "$logs/summary.txt" 2>&1; then
    echo "ok ctensor-pw --device gpu" | tee -a "$logs/summary.txt"
  else
    echo "FAILED ctensor-pw --device gpu (see pw.log)" | tee -a "$logs/summary.txt"
    failed=1
  fi
fi
# GPU_RUN_LARGE=1: the bench row of the 64-atom Si cell at Gamma, 15 Ha, 132 bands (the
# cell of bench/pw-vs-abinit.sh --large), on the GPU and on all the CPU's cores; the wall
# times and the energies go to summary.txt, the runs' output to pw-large.log.
if [ "${GPU_RUN_LARGE:-0}" = 1 ] && [ -x "$work/tools/ctensor-pw" ]; then
  python3 bench/si_cubic.py "$work" si64 2 1 132 "$PWD/pw/data/14si.4.hgh"
  : > "$logs/pw-large.log"
  for dev in gpu cpu; do
    timeout 280 "$work/tools/ctensor-pw" run "$work/si64.json" --device $dev --threads "$(nproc)" \
      --output "$logs/pw-large-$dev.json" >> "$logs/pw-large.log" 2>&1 || echo "FAILED si64 --device $dev" | tee -a "$logs/summary.txt"
  done
  python3 -c "
import json
for d in ('gpu', 'cpu'):
    try:
        r = json.load(open('$logs/pw-large-%s.json' % d))
        print('si64 %s: %.2f s, %d steps, E_tot %.12f Ha' % (d, r['wall_time_s'], r['scf_iterations'], r['total_energy_ha']))
    except Exception as e:
        print('si64 %s: no result (%s)' % (d, e))" | tee -a "$logs/summary.txt"
fi
for bin in "$work"/bin/*; do
  name=$(basename "$bin")
  [ "$name" = ctensor-bench ] && continue
  if [ -n "${GPU_RUN_ONLY:-}" ] && ! [[ $name =~ $GPU_RUN_ONLY ]]; then continue; fi
  start=$(date +%s)
  echo "===== $name" >> "$logs/tests.log"
  # shellcheck disable=SC2086 # GPU_RUN_ARGS is split on purpose
  if timeout 300 "$bin" --test-threads=1 ${GPU_RUN_ARGS:-} > "$work/one.log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  cat "$work/one.log" >> "$logs/tests.log"
  line="$status $name ($(($(date +%s) - start)) s): $(grep -E '^test result' "$work/one.log" | tail -1)"
  echo "$line" | tee -a "$logs/summary.txt"
  echo "  SKIP lines: $(grep -c 'SKIP' "$work/one.log")" >> "$logs/summary.txt"
done
if [ "${GPU_RUN_BENCH:-1}" != 0 ] && [ -x "$work/bin/ctensor-bench" ]; then
  (cd "$work" && timeout 400 "$work/bin/ctensor-bench" gpu > "$logs/bench.log" 2>&1) \
    || echo "bench FAILED" | tee -a "$logs/summary.txt"
fi
rm -rf "$work"
exit $failed
