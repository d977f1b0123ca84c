#!/usr/bin/env bash
# Builds and runs scripts/openblas-threads.c (OpenBLAS alone, no ctensor): ssyevr and
# dsyevr from four threads at once, with the kernels OpenBLAS picks for this CPU and
# with the Prescott and Haswell ones forced (OPENBLAS_CORETYPE; Haswell needs AVX2), at 4
# OpenBLAS threads and at 1 after 4. Exits non-zero when any call returned fewer
# eigenpairs than n. Not part of `make test`: the failure it shows is OpenBLAS's, and
# intermittent.
set -uo pipefail
cd "$(dirname "$0")/.."
out=target/openblas-threads
mkdir -p target
cc -O2 -o "$out" scripts/openblas-threads.c -lopenblas -lpthread || exit 1
rc=0
for core in default Prescott Haswell; do
  for counts in "4 4" "4 1"; do
    # shellcheck disable=SC2086
    if [ "$core" = default ]; then
      "$out" $counts || rc=1
    else
      OPENBLAS_CORETYPE=$core "$out" $counts || rc=1
    fi
  done
done
exit $rc
