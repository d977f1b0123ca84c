#!/usr/bin/env bash
# Installs the system packages ctensor builds against, when they are missing:
# pkg-config, the OpenBLAS development package (BLAS + LAPACK), and for the demo's plot
# fontconfig, freetype and the DejaVu fonts, libxc for the plane-wave crate pw/, and FFTW's
# shared libraries for the optional FFTW backend of the host FFTs, from Debian/Ubuntu's apt. With the argument `bench`, also FFTW and ABINIT (the peer of
# ctensor-pw); with `mpi` (make test, make lint, make bench: the workspace has the
# crate ctensor-mpi), OpenMPI, ScaLAPACK for OpenMPI, ELPA and libclang (rsmpi generates its
# MPI bindings with bindgen). As root it installs directly, otherwise through passwordless sudo; when neither
# is possible it prints the exact command and fails.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists openblas; then
  missing+=(libopenblas-dev)
fi
command -v cc >/dev/null 2>&1 || missing+=(gcc)
# The C ABI's client programs (tests/c): C++ and Fortran compilers.
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v gfortran >/dev/null 2>&1 || missing+=(gfortran)
# The demo's plot (plotters' SVG text layout) needs fontconfig, freetype and a font.
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists fontconfig; then
  missing+=(libfontconfig1-dev)
fi
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists freetype2; then
  missing+=(libfreetype-dev)
fi
ls /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf >/dev/null 2>&1 || missing+=(fonts-dejavu-core)
# The plane-wave crate (pw/, part of the workspace) calls libxc for exchange-correlation.
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libxc; then
  missing+=(libxc-dev)
fi
# FFTW's shared libraries for the optional host FFT backend (HostFft::Fftw, loaded at run
# time; make test runs its tests against them, and they skip where it is absent).
ls /usr/lib/*/libfftw3.so.3 >/dev/null 2>&1 || missing+=(libfftw3-double3)
ls /usr/lib/*/libfftw3f.so.3 >/dev/null 2>&1 || missing+=(libfftw3-single3)
# `ensure-deps.sh bench`: also FFTW's headers, for the peer of make bench's FFT table.
if [ "${1:-}" = bench ] || [ "${2:-}" = bench ]; then
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists fftw3; then
    missing+=(libfftw3-dev)
  fi
  # ctensor-pw's side-by-side run against ABINIT (bench/pw-vs-abinit.sh).
  command -v abinit >/dev/null 2>&1 || missing+=(abinit abinit-data)
  # ... and against Quantum ESPRESSO's pw.x (bench/pw-vs-qe.sh).
  command -v pw.x >/dev/null 2>&1 || missing+=(quantum-espresso)
fi
# `ensure-deps.sh mpi`: the MPI crate's system libraries.
if [ "${1:-}" = mpi ] || [ "${2:-}" = mpi ]; then
  command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists ompi-c; then
    missing+=(libopenmpi-dev)
  fi
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists scalapack-openmpi; then
    missing+=(libscalapack-openmpi-dev)
  fi
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists elpa; then
    missing+=(libelpa-dev)
  fi
  compgen -G "/usr/lib/llvm-*/lib/libclang.so*" >/dev/null || missing+=(libclang-dev)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
echo "ensure-deps: missing ${missing[*]}; installing" >&2
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-deps: no apt-get here; install the OpenBLAS development package (with its openblas.pc) and pkg-config by hand" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  sh -c "$cmd"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo DEBIAN_FRONTEND=noninteractive sh -c "$cmd"
else
  echo "ensure-deps: cannot install as $(id -un) without a password. Run:" >&2
  echo "  sudo sh -c '$cmd'" >&2
  exit 1
fi
pkg-config --exists openblas || { echo "ensure-deps: openblas.pc still not found after the install" >&2; exit 1; }
