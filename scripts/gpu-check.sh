#!/usr/bin/env bash
# The build half of a GPU run, for a GPU machine that has a driver but no Rust toolchain:
# builds every test binary and the bench in release mode here, strips them, and packs them
# with the shared libraries they load (OpenBLAS, gfortran, quadmath, and NVRTC from
# scripts/nvrtc-env.sh) and scripts/gpu-run.sh into one ignored folder, .device/gpu
# (about 40 MiB compressed: it travels within a 64 MiB limit).
#
#   bash scripts/gpu-check.sh            # here
#   bash .device/gpu/gpu-run.sh          # there, from the repository root
#
# Nothing needs CUDA at build time (cudarc loads it at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/gpu
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
bash scripts/ensure-deps.sh
nvrtc_lib=$(bash scripts/nvrtc-env.sh)

echo "gpu-check: building release test binaries and the bench" >&2
list=$(cargo test --release --workspace --exclude ctensor-bench --all-targets --no-run \
         --message-format=json 2>/dev/null \
       | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | sort -u)
cargo build --release -p ctensor-bench --quiet
list="$list
$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)/release/ctensor-bench"
for exe in $list; do
  [ -x "$exe" ] || continue
  # Test binaries are named <target>-<hash>; keep the target name.
  name=$(basename "$exe" | sed -E 's/-[0-9a-f]{16}$//')
  strip -o "$out/bin/$name" "$exe"
done

for so in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  path=$(ldconfig -p | awk -v so="$so" '!found && $1 == so && /x86-64/ {print $NF; found = 1}')
  [ -n "$path" ] || { echo "gpu-check: $so not found" >&2; exit 1; }
  cp -L "$path" "$out/lib/$so"
done
cp -L "$nvrtc_lib"/libnvrtc.so.12 "$nvrtc_lib"/libnvrtc-builtins.so.12.9 "$out/lib/"
cp scripts/gpu-run.sh "$out/gpu-run.sh"
# One archive travels faster than many files and stays under the size limit.
tar -C "$out" -cJf "$out.tar.xz" bin lib gpu-run.sh
rm -rf "$out/bin" "$out/lib"
mv "$out.tar.xz" "$out/bundle.tar.xz"
echo "gpu-check: $(ls "$out" | wc -l) files, $(du -sh "$out" | cut -f1) in $out; run there: bash $out/gpu-run.sh" >&2
