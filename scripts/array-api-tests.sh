#!/usr/bin/env bash
# Runs the public array API conformance suite (data-apis/array-api-tests) against
# ctensor.array_api and prints its pass count. The suite is published on GitHub only, not
# on PyPI, so neither make test nor CI can fetch it: give a checkout of it (with its
# array-api submodule) as the argument.
#
#   git clone --recursive https://github.com/data-apis/array-api-tests /tmp/array-api-tests
#   bash scripts/array-api-tests.sh /tmp/array-api-tests [pytest options]
#
# The suite imports `xp.bool` before anything else and ctensor has no boolean dtype
# (comparisons give int32 masks), so the module under test is ctensor.array_api plus a
# `bool` name bound to numpy's bool dtype, made here in a temporary folder: every test
# that needs a boolean array fails, as it should. Builds the wheel (make wheel) and installs
# it with the suite's requirements (hypothesis, ndindex, pytest; PyPI) in a venv under
# target/.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:?usage: scripts/array-api-tests.sh PATH-TO-array-api-tests [pytest options]}
shift
[ -d "$suite/array_api_tests" ] || { echo "no array_api_tests/ in $suite" >&2; exit 2; }
[ -d "$suite/array-api/src" ] || { echo "$suite/array-api is empty: clone with --recursive" >&2; exit 2; }

make --no-print-directory wheel >&2
venv="${CARGO_TARGET_DIR:-target}/array-api-venv"
# shellcheck source=scripts/venv.sh
. scripts/venv.sh
make_venv "$venv" array-api-tests
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps \
  "$(ls -t "${CARGO_TARGET_DIR:-target}"/wheels/ctensor-*.whl | head -1)"
"$venv/bin/pip" install --quiet --disable-pip-version-check numpy==2.1.3 "hypothesis>=6.151" \
  "ndindex>=1.8" pytest pytest-json-report

shim=$(mktemp -d)
trap 'rm -rf "$shim"' EXIT
cat > "$shim/ctensor_xp.py" <<'EOF'
# ctensor.array_api plus a `bool` name, so that the suite can import it (see the script).
import numpy as _np
import ctensor.array_api as _xp

globals().update({k: v for k, v in vars(_xp).items() if not k.startswith("__")})
__array_api_version__ = _xp.__array_api_version__
__array_namespace_info__ = _xp.__array_namespace_info__
bool = _np.dtype(bool)
EOF
report="${CARGO_TARGET_DIR:-target}/array-api-tests.json"
set +e
(cd "$suite" && PYTHONPATH="$shim" ARRAY_API_TESTS_MODULE=ctensor_xp \
  "$OLDPWD/$venv/bin/python" -m pytest array_api_tests -q -p no:cacheprovider \
  --hypothesis-disable-deadline --max-examples=20 \
  --json-report --json-report-file="$OLDPWD/$report" "$@")
set -e
"$venv/bin/python" - "$report" <<'EOF'
import collections, json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
print(f"array-api-tests: {s.get('passed', 0)} passed, {s.get('failed', 0)} failed, "
      f"{s.get('skipped', 0)} skipped, {s.get('error', 0)} errors of {s.get('total', 0)}")
by_file = collections.defaultdict(collections.Counter)
for t in r["tests"]:
    by_file[t["nodeid"].split("::")[0].rsplit("/", 1)[-1]][t["outcome"]] += 1
for f, c in sorted(by_file.items()):
    print(f"  {f:40s} {c.get('passed', 0):5d} passed {c.get('failed', 0):5d} failed {c.get('skipped', 0):4d} skipped")
EOF
