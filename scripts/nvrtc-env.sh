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

if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    cmd="apt-get update && apt-get install -y --no-install-recommends python3-venv"
    echo "nvrtc-env: python3 -m venv failed; installing python3-venv" >&2
    if [ "$(id -u)" = 0 ]; then
      DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >&2
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo DEBIAN_FRONTEND=noninteractive sh -c "$cmd" >&2
    else
      echo "nvrtc-env: cannot install python3-venv without a password. Run:" >&2
      echo "  sudo sh -c '$cmd'" >&2
      exit 1
    fi
    python3 -m venv "$venv" >&2
  fi
fi
lib=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib 2>/dev/null | head -n1 || true)
if [ -z "$lib" ] || [ ! -e "$lib/libnvrtc.so.12" ]; then
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pins >&2
  lib=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib | head -n1)
fi
cd "$lib" && pwd
