#!/usr/bin/env bash
# Builds the static library, compiles and runs the C, C++ and Fortran clients and the
# DLPack/.npy client against it, and runs the C clients under valgrind when valgrind is installed. Called by
# `make test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --lib --quiet
TARGET="${CARGO_TARGET_DIR:-target}"
LIB="$TARGET/release/libctensor.a"
LIBS="$(pkg-config --libs openblas) -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
OUT="$TARGET/c-tests"
mkdir -p "$OUT"
cc -std=c11 -Wall -Wextra -Werror -Iinclude tests/c/client.c "$LIB" $LIBS -o "$OUT/client"
"$OUT/client"
c++ -std=c++17 -Wall -Wextra -Werror -Iinclude tests/c/client.cpp "$LIB" $LIBS -o "$OUT/client_cpp"
"$OUT/client_cpp"
# The einsum operand array in every shape a caller writes it, as C99 (the const form,
# as clients of the earlier header pass it) and as C11 (the handle arrays too).
for std in c99 c11; do
  cc -std=$std -pedantic -Wall -Wextra -Werror -Iinclude tests/c/einsum_operands.c "$LIB" $LIBS \
    -o "$OUT/einsum_operands_$std"
  "$OUT/einsum_operands_$std"
done
cc -std=c11 -Wall -Wextra -Werror -Iinclude tests/c/math.c "$LIB" $LIBS -o "$OUT/math"
"$OUT/math"
cc -std=c11 -Wall -Wextra -Werror -Iinclude tests/c/dlpack.c "$LIB" $LIBS -o "$OUT/dlpack"
"$OUT/dlpack" "$OUT"
gfortran -std=f2008 -Wall -Werror -J "$OUT" include/ctensor.f90 tests/c/client.f90 "$LIB" $LIBS -o "$OUT/client_f90"
"$OUT/client_f90" "$OUT"
# NumPy reads the file the Fortran client saved as the Fortran-ordered complex128 matrix.
PY="${TARGET}/py-venv/bin/python"
if [ -x "$PY" ]; then
  "$PY" -c "
import numpy as np
a = np.load('$OUT/client_f90.npy')
assert a.dtype == np.complex128 and a.shape == (3, 3), (a.dtype, a.shape)
assert a.flags.f_contiguous and not a.flags.c_contiguous
assert a[1, 0] == 1 + 1j and np.array_equal(a, a.conj().T), a
print('numpy: the Fortran client\'s .npy is its column-major complex(8) matrix')"
fi

# Every ct_* function the shared library exports is declared in the header.
missing=$(comm -23 \
  <(nm -D --defined-only "$TARGET/release/libctensor.so" | awk '$2 == "T" && $3 ~ /^ct_/ {print $3}' | sort -u) \
  <(grep -o '\bct_[a-z0-9_]*(' include/ctensor.h | tr -d '(' | sort -u))
if [ -n "$missing" ]; then
  echo "exported but not declared in include/ctensor.h: $missing" >&2
  exit 1
fi
echo "header: all $(nm -D --defined-only "$TARGET/release/libctensor.so" | awk '$3 ~ /^ct_/' | wc -l) exported ct_* functions are declared"

# Dynamic linking: the SONAME is libctensor.so.0, which the program records.
ln -sf libctensor.so "$TARGET/release/libctensor.so.0"
cc -std=c11 -Wall -Wextra -Werror -Iinclude tests/c/client.c -L"$TARGET/release" -lctensor -lm \
  -o "$OUT/client_dyn"
readelf -d "$OUT/client_dyn" | grep -q 'NEEDED.*\[libctensor.so.0\]' \
  || { echo "client_dyn does not record libctensor.so.0" >&2; exit 1; }
LD_LIBRARY_PATH="$TARGET/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$OUT/client_dyn"
echo "dynamic linking: client_dyn runs against libctensor.so.0"
if command -v valgrind >/dev/null 2>&1; then
  # OpenBLAS's thread pool keeps memory for the life of the process ("still
  # reachable"); only errors and definite leaks fail the run.
  OPENBLAS_NUM_THREADS=1 valgrind --quiet --error-exitcode=1 --leak-check=full --show-possibly-lost=no \
    --errors-for-leak-kinds=definite "$OUT/client" >/dev/null
  # The DLPack client: a deleter run twice, too early or never is an invalid access or a
  # definite leak here.
  valgrind --quiet --error-exitcode=1 --leak-check=full --show-possibly-lost=no \
    --errors-for-leak-kinds=definite "$OUT/dlpack" "$OUT" >/dev/null
  echo "valgrind: no errors, no definite leaks (client, dlpack)"
  # The eigensolvers on memory that ends at a guard page, under valgrind: with ctensor's
  # guard against the OpenBLAS 0.3.21-0.3.23 complex gemv/hemv over-read
  # (kernels/src/openblas.rs) every read stays inside ctensor's own padded copies, so no
  # suppression is needed and any invalid read fails the run.
  BIN=$(cargo test -q --workspace --exclude ctensor-bench --exclude ctensor-python --test openblas_overread --no-run --message-format=json 2>/dev/null \
    | grep -o '"executable":"[^"]*openblas_overread[^"]*"' | tail -1 | cut -d'"' -f4)
  CTENSOR_OVERREAD_CHILD=1 CTENSOR_OVERREAD_SMALL=1 OPENBLAS_NUM_THREADS=1 \
    valgrind --quiet --error-exitcode=1 "$BIN" child_runs_affected_drivers_on_guarded_memory \
    --exact --test-threads=1 >/dev/null
  echo "valgrind: eigensolvers on guarded memory read nothing outside ctensor's buffers"
else
  echo "SKIP: valgrind is not installed"
fi
