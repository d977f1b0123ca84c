"""NumPy's numpy.fft.fftn (pocketfft, one thread) on the same grid as ctensor's FFT
bench. Run by the bench binary:

    python fftn.py FILE N0 N1 N2 SAMPLES

FILE holds N0 x N1 x N2 complex128 values, row-major. Prints the median, in seconds
per transform, as "numpy_fftn=<s>".
"""

import statistics
import sys
import time

import numpy as np


def main():
    path = sys.argv[1]
    n0, n1, n2, samples = (int(a) for a in sys.argv[2:6])
    x = np.fromfile(path, dtype=np.complex128).reshape(n0, n1, n2)
    np.fft.fftn(x)  # warm up
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        np.fft.fftn(x)
        times.append(time.perf_counter() - t)
    print(f"numpy_fftn={statistics.median(times)}")


if __name__ == "__main__":
    main()
