#!/usr/bin/env bash
# Provides NVRTC without a CUDA toolkit: installs PyPI's nvidia-cuda-nvrtc-cu12 (the
# library) and nvidia-cuda-runtime-cu12 (the CUDA headers) into a virtual environment
# under target/, once, and prints the directory that holds libnvrtc.so.12, for
# LD_LIBRARY_PATH. Needs python3 with venv (Debian: python3-venv, installed here when
# missing and possible) and access to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${CARGO_TARGET_DIR:-target}/nvrtc-venv"
pins="nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79"

# shellcheck source=scripts/venv.sh
. scripts/venv.sh
make_venv "$venv" nvrtc-env
lib=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib 2>/dev/null | head -n1 || true)
if [ -z "$lib" ] || [ ! -e "$lib/libnvrtc.so.12" ]; then
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pins >&2
  lib=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib | head -n1)
fi
cd "$lib" && pwd
