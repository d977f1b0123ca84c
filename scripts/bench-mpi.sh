#!/usr/bin/env bash
# make bench's MPI part (issue: beyond one machine). On one node of 2 cores, 2 ranks of 1
# thread are compared with 1 process of 2 threads: the same cores, so parity is the
# expected result; the tables show what the MPI layer costs.
#   1. The demo's k-points/s: 1 and 2 ranks (1 thread each) vs 1 process with 2 threads,
#      for the k-points split over ranks; and the dense eigenproblems of one pool on a
#      1 × 2 grid (--pools 1: ELPA). Medians of 3 interleaved rounds.
#   2. Distributed eigh (ScaLAPACK and ELPA) of a c64 matrix, n = 2000, on 2 ranks vs
#      single-process eigh (LAPACK, faer) with 2 threads.
set -euo pipefail
cd "$(dirname "$0")/.."
T="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --features mpi --example silicon_bands
cargo build --release --quiet -p ctensor-mpi --example eigh_bench
run() { mpirun --allow-run-as-root --oversubscribe --bind-to none "$@"; }
demo="$T/release/examples/silicon_bands"
kps() { grep -o '[0-9.]* k-points/s' | cut -d' ' -f1; }
echo "== MPI: the demo's k-points/s (Si, path L-G-X-U,K-G, 10 points per segment; median of 3 interleaved rounds)"
echo "| plane waves | 1 process, 1 thread | 1 process, 2 threads | 1 rank, 1 thread | 2 ranks × 1 thread | 2 ranks, --pools 1 (ELPA on a 1 × 2 grid) |"
echo "|---|---|---|---|---|---|"
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
for g in 27 60; do
  out="$T/bench/demo-mpi"
  args=(--gcut "$g" --points 10 --out "$out")
  a=(); b=(); c=(); d=(); e=()
  for round in 1 2 3; do
    one=$("$demo" "${args[@]}" --threads 1)
    a+=("$(echo "$one" | kps)")
    npw=$(echo "$one" | grep -o '[0-9]* plane waves' | head -1 | cut -d' ' -f1)
    b+=("$("$demo" "${args[@]}" --threads 2 | kps)")
    c+=("$(run -n 1 "$demo" "${args[@]}" --threads 1 | kps)")
    d+=("$(run -n 2 "$demo" "${args[@]}" --threads 1 | kps)")
    e+=("$(run -n 2 "$demo" "${args[@]}" --threads 1 --pools 1 | kps)")
  done
  echo "| $npw | $(median "${a[@]}") | $(median "${b[@]}") | $(median "${c[@]}") | $(median "${d[@]}") | $(median "${e[@]}") |"
done
echo
echo "== MPI: distributed eigh vs one process (median of 3)"
echo "| problem | solver | time |"
echo "|---|---|---|"
run -n 1 "$T/release/examples/eigh_bench" 2000 2
run -n 2 "$T/release/examples/eigh_bench" 2000 1
