#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest against NumPy and SciPy): builds the
# extension with maturin into make test's virtual environment (scripts/py-env.sh), then
# runs pytest. Called by `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$(bash scripts/py-env.sh)
venv=$(dirname "$(dirname "$py")")
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release --quiet -m python/Cargo.toml >&2
# From outside the source tree, so `import ctensor` is the installed extension.
cd python/tests && "$py" -m pytest -q -p no:cacheprovider .
