#!/usr/bin/env bash
# The run half of a GPU run (see scripts/gpu-check.sh): unpacks .device/gpu/bundle.tar.xz
# and runs every test binary on the GPU machine, one binary at a time and with one test
# thread, so a sticky CUDA fault is blamed on the test that caused it; then the bench's
# GPU tables. Output: a log per binary and a summary under $OUT (or /tmp/ctensor-gpu).
# Run from the repository root (the tests read files of the tree). Exit status 1 when a
# binary failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
logs="${OUT:-/tmp/ctensor-gpu}"
mkdir -p "$logs"
work=$(mktemp -d)
tar -C "$work" -xJf "$here/bundle.tar.xz"
export LD_LIBRARY_PATH="$work/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CTENSOR_REQUIRE_GPU=1 RUST_BACKTRACE=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1 || true
failed=0
: > "$logs/summary.txt"
for bin in "$work"/bin/*; do
  name=$(basename "$bin")
  [ "$name" = ctensor-bench ] && continue
  start=$(date +%s)
  if timeout 900 "$bin" --test-threads=1 > "$logs/$name.log" 2>&1; then status=ok; else status=FAILED; failed=1; fi
  line="$status $name ($(( $(date +%s) - start )) s): $(grep -E '^test result' "$logs/$name.log" | tail -1)"
  echo "$line" | tee -a "$logs/summary.txt"
  grep -c '^SKIP' "$logs/$name.log" | sed "s/^/  SKIP lines: /" >> "$logs/summary.txt"
done
if [ -x "$work/bin/ctensor-bench" ]; then
  (cd "$logs" && timeout 900 "$work/bin/ctensor-bench" > "$logs/bench.log" 2>&1) || echo "bench FAILED" | tee -a "$logs/summary.txt"
fi
rm -rf "$work"
exit $failed
