#!/usr/bin/env bash
# The build half of a GPU run, for a GPU machine that has a driver but no Rust toolchain:
# builds every test binary and the bench in release mode here, strips them, and packs them
# with the shared libraries they load (OpenBLAS, gfortran, quadmath, fontconfig and its
# needs; NVRTC from scripts/nvrtc-env.sh apart) and scripts/gpu-run.sh into one ignored
# folder, .device/gpu (bundle.tar.xz and gpu-run.sh: 37 MB with 82 binaries on
# 2026-12-06), and NVRTC into .device/nvrtc (31 MB). Both together are over the device
# tool's 64 MiB carry limit: carry .device/gpu first, and .device/nvrtc in a second call
# only where gpu-run.sh reports that the GPU machine has no NVRTC of its own.
#
#   bash scripts/gpu-check.sh            # here
#   bash .device/gpu/gpu-run.sh          # there, from the repository root
#
# Nothing needs CUDA at build time (cudarc loads it at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device/gpu
rm -rf "$out" .device/nvrtc && mkdir -p "$out/bin" "$out/lib" "$out/tools" .device/nvrtc
# The bench links FFTW (its peer in the FFT table) and the workspace holds the MPI crate.
bash scripts/ensure-deps.sh bench mpi
nvrtc_lib=$(bash scripts/nvrtc-env.sh)

echo "gpu-check: building release test binaries, ctensor-pw and the bench" >&2
# One package selection for every call, so that cargo resolves one set of features and
# builds the dependencies once (a call with -p alone resolves its own set and rebuilds
# everything below it). The test harnesses are the executables under deps/; the list
# leaves out the programs that the tests build beside them (ctensor-pw, the examples).
list=$(cargo test --release --workspace --all-targets --no-run \
         --message-format=json 2>/dev/null \
       | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | grep '/deps/' | sort -u)
cargo build --release --workspace --all-targets --quiet
target_dir=$(cargo metadata --format-version 1 --no-deps | grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
list="$list
$target_dir/release/ctensor-bench"
# The Kohn-Sham program: pw/tests/cli.rs runs it by its build path, and gpu-run.sh runs
# the SCF with --device gpu against --device cpu.
strip -o "$out/tools/ctensor-pw" "$target_dir/release/ctensor-pw"
for exe in $list; do
  [ -x "$exe" ] || continue
  # Test binaries are named <target>-<hash>; keep the target name (a library's and a
  # program's harness of one crate share it: the second gets its hash back).
  name=$(basename "$exe" | sed -E 's/-[0-9a-f]{16}$//')
  [ -e "$out/bin/$name" ] && name=$(basename "$exe")
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
cp scripts/gpu-run.sh "$out/gpu-run.sh"
# Some tests read files of the tree by the path it had at build time.
pwd > "$out/build-root.txt"
# One xz stream whose dictionary holds the whole tar: the binaries each link the whole
# library, so most of each one repeats the others (82 binaries and their libraries: 37 MB
# this way, 67 MB at xz's default 8 MiB dictionary; one thread, since xz's threads cut
# the stream into blocks that cannot see each other).
tar -C "$out" -cf - bin lib tools gpu-run.sh build-root.txt \
  | xz -T1 --lzma2=preset=6,dict=512MiB > "$out.tar.xz"
rm -rf "$out/bin" "$out/lib" "$out/tools" "$out/build-root.txt"
mv "$out.tar.xz" "$out/bundle.tar.xz"
# NVRTC (31 MB packed) in a folder of its own: with it the bundle is over the device
# tool's 64 MiB carry limit. gpu-run.sh uses the GPU machine's own NVRTC when it has
# one, and this archive when .device/nvrtc is carried too (a second call on the warm
# machine, which keeps what the first one brought).
mkdir -p .device/nvrtc/lib
cp -L "$nvrtc_lib"/libnvrtc.so.12 "$nvrtc_lib"/libnvrtc-builtins.so.12.9 .device/nvrtc/lib/
tar -C .device/nvrtc/lib -cJf .device/nvrtc/nvrtc.tar.xz .
rm -rf .device/nvrtc/lib
ls -l "$out" .device/nvrtc >&2
echo "gpu-check: $(ls "$out" | wc -l) files, $(du -sh "$out" | cut -f1) in $out; run there: bash $out/gpu-run.sh" >&2
