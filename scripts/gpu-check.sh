#!/usr/bin/env bash
# The build half of a GPU run, for a GPU machine that has a driver but no Rust toolchain:
# builds every test binary and the bench in release mode here, strips them, and packs them
# with the shared libraries they load (OpenBLAS, gfortran, quadmath, fontconfig and its
# needs, and NVRTC from scripts/nvrtc-env.sh) and scripts/gpu-run.sh into one ignored
# folder, .device/gpu (about 46 MiB compressed: it travels within a 64 MiB limit).
#
#   bash scripts/gpu-check.sh            # here
#   bash .device/gpu/gpu-run.sh          # there, from the repository root
#
# Nothing needs CUDA at build time (cudarc loads it at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/gpu
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/tools"
bash scripts/ensure-deps.sh
nvrtc_lib=$(bash scripts/nvrtc-env.sh)

echo "gpu-check: building release test binaries and the bench" >&2
list=$(cargo test --release --workspace --exclude ctensor-bench --all-targets --no-run \
         --message-format=json 2>/dev/null \
       | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | sort -u)
cargo build --release -p ctensor-bench --quiet
list="$list
$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)/release/ctensor-bench"
# The Kohn-Sham program: pw/tests/cli.rs runs it by its build path, and gpu-run.sh runs
# the SCF with --device gpu against --device cpu.
cargo build --release -p ctensor-pw --quiet
strip -o "$out/tools/ctensor-pw" "$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)/release/ctensor-pw"
for exe in $list; do
  [ -x "$exe" ] || continue
  # Test binaries are named <target>-<hash>; keep the target name.
  name=$(basename "$exe" | sed -E 's/-[0-9a-f]{16}$//')
  strip -o "$out/bin/$name" "$exe"
done

# Every shared library the binaries load beyond the C runtime (OpenBLAS, gfortran,
# quadmath, and fontconfig/freetype with their own needs for the demo's plots), as ldd
# resolves them here.
ldd "$out"/bin/* 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r so path; do
    case "$so" in
      libc.so.*|libm.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
      *) cp -L "$path" "$out/lib/$so" ;;
    esac
  done
for so in libopenblas.so.0 libgfortran.so.5; do
  [ -e "$out/lib/$so" ] || { echo "gpu-check: $so not found" >&2; exit 1; }
done
cp -L "$nvrtc_lib"/libnvrtc.so.12 "$nvrtc_lib"/libnvrtc-builtins.so.12.9 "$out/lib/"
cp scripts/gpu-run.sh "$out/gpu-run.sh"
# Some tests read files of the tree by the path it had at build time.
pwd > "$out/build-root.txt"
# One archive travels faster than many files and stays under the size limit.
tar -C "$out" -cJf "$out.tar.xz" bin lib tools gpu-run.sh build-root.txt
rm -rf "$out/bin" "$out/lib" "$out/build-root.txt"
mv "$out.tar.xz" "$out/bundle.tar.xz"
echo "gpu-check: $(ls "$out" | wc -l) files, $(du -sh "$out" | cut -f1) in $out; run there: bash $out/gpu-run.sh" >&2
