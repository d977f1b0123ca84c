"""The peers of ctensor's stacked eigh on the same matrices: SciPy's loop of
scipy.linalg.eigh(driver="evd") (zheevd, as ctensor's LapackEvd) and NumPy's stacked
numpy.linalg.eigh (a gufunc over the stack). Run by the bench binary:

    python eigh_stack.py FILE COUNT N SAMPLES

FILE holds COUNT x N x N complex128 values, row-major. Prints the medians, in seconds
per stack, as "scipy_loop=<s> numpy_stack=<s>". Thread counts come from the
environment (the bench sets OPENBLAS_NUM_THREADS and OMP_NUM_THREADS to 2).
"""

import statistics
import sys
import time

import numpy as np
import scipy.linalg


def seconds(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    path, count, n, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    h = np.fromfile(path, dtype=np.complex128).reshape(count, n, n)

    def scipy_loop():
        for k in range(count):
            scipy.linalg.eigh(h[k], driver="evd")

    def numpy_stack():
        np.linalg.eigh(h)

    # A warm-up call each (first-call costs are not the steady state), then samples
    # alternating between the two so neither always runs on a warm cache.
    scipy_loop()
    numpy_stack()
    s, p = [], []
    for _ in range(samples):
        s.append(seconds(scipy_loop))
        p.append(seconds(numpy_stack))
    print(f"scipy_loop={statistics.median(s)} numpy_stack={statistics.median(p)}")


if __name__ == "__main__":
    main()
