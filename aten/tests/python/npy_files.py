"""NumPy's side of aten/tests/npy.rs.

    npy_files.py write DIR   NumPy writes .npy/.npz files and, beside each array, its
                             elements in C order and native byte order (NAME.bin), listed
                             in DIR/manifest.txt as "NAME DESCR SHAPE FORTRAN".
    npy_files.py check DIR   NumPy loads the files ctensor wrote into DIR (listed the same
                             way, with .bin files ctensor made from its own element vectors)
                             and compares dtype, shape, memory order and bytes.
"""
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

NATIVE = {"f4": "<f4", "f8": "<f8", "i4": "<i4", "i8": "<i8",
          "c8": "<c8", "c16": "<c16", "f2": "<f2"}


def values(rng, code, shape):
    n = int(np.prod(shape))
    if code in ("i4", "i8"):
        a = rng.integers(-2**31 if code == "i4" else -2**62, 2**31 - 1 if code == "i4" else 2**62, n)
        return a.astype(NATIVE[code]).reshape(shape)
    re = rng.standard_normal(n) * 1e3
    if n >= 4:  # the values that break byte handling
        re[:4] = [np.nan, np.inf, -np.inf, -0.0]
    if code in ("c8", "c16"):
        im = rng.standard_normal(n)
        return (re + 1j * im).astype(NATIVE[code]).reshape(shape)
    if code == "bf16":
        return re.astype(ml_dtypes.bfloat16).reshape(shape)
    return re.astype(NATIVE[code]).reshape(shape)


def write(d):
    rng = np.random.default_rng(7)
    lines = []

    def emit(name, a, fortran):
        # NumPy writes fortran_order True only for arrays that are not also C-ordered.
        fortran = fortran and not a.flags.c_contiguous
        (d / f"{name}.bin").write_bytes(np.ascontiguousarray(a).tobytes())
        shape = ",".join(str(s) for s in a.shape)
        code = "bf16" if a.dtype == ml_dtypes.bfloat16 else a.dtype.str[1:]
        lines.append(f"{name} {code} {shape or '-'} {int(fortran)}")

    shapes = [(), (0,), (1,), (7,), (300,), (3, 5), (2, 3, 4), (0, 4)]
    for code in list(NATIVE) + ["bf16"]:
        for k, shape in enumerate(shapes):
            a = values(rng, code, shape)
            name = f"{code}_c{k}"
            np.save(d / f"{name}.npy", a)
            emit(name, a, False)
            if len(shape) >= 2:
                name = f"{code}_f{k}"
                np.save(d / f"{name}.npy", np.asfortranarray(a))
                emit(name, np.asfortranarray(a), True)
        if code != "bf16":
            a = values(rng, code, (4, 6))
            big = a.astype(">" + NATIVE[code][1:])
            np.save(d / f"{code}_big.npy", big)
            emit(f"{code}_big", a, False)
            np.save(d / f"{code}_bigf.npy", np.asfortranarray(big))
            emit(f"{code}_bigf", np.asfortranarray(a), True)
            for ver in [(2, 0), (3, 0)]:
                name = f"{code}_v{ver[0]}"
                with open(d / f"{name}.npy", "wb") as f:
                    np.lib.format.write_array(f, a, version=ver)
                emit(name, a, False)
    arrays = {"psi": values(rng, "c16", (5, 3)), "e": values(rng, "f8", (9,)),
              "k": values(rng, "i4", (2, 2)), "h": np.asfortranarray(values(rng, "f4", (3, 4)))}
    np.savez(d / "stored.npz", **arrays)
    np.savez_compressed(d / "deflated.npz", **arrays)
    for key, a in arrays.items():
        emit(f"npz_{key}", a, a.flags.f_contiguous)
    (d / "manifest.txt").write_text("\n".join(lines) + "\n")


def check(d):
    failures = []
    for line in (d / "manifest.txt").read_text().split("\n"):
        if not line:
            continue
        name, code, shape, fortran = line.split()
        shape = () if shape == "-" else tuple(int(s) for s in shape.split(","))
        if name.startswith("npz:"):
            _, archive, key = name.split(":")
            a = np.load(d / archive)[key]
            name = f"{archive}.{key}"
        else:
            a = np.load(d / f"{name}.npy")
        if code == "bf16":
            if a.dtype.str not in ("<V2", "|V2"):
                failures.append(f"{name}: dtype {a.dtype.str}, expected <V2")
                continue
            a = a.view(ml_dtypes.bfloat16)
        elif a.dtype.str != NATIVE[code]:
            failures.append(f"{name}: dtype {a.dtype.str}, expected {NATIVE[code]}")
            continue
        if a.shape != shape:
            failures.append(f"{name}: shape {a.shape}, expected {shape}")
        if fortran == "1" and not (a.flags.f_contiguous and not a.flags.c_contiguous):
            failures.append(f"{name}: expected a Fortran-ordered array")
        if fortran == "0" and not a.flags.c_contiguous:
            failures.append(f"{name}: expected a C-ordered array")
        want = (d / f"{name.replace(':', '.')}.bin").read_bytes()
        if np.ascontiguousarray(a).tobytes() != want:
            failures.append(f"{name}: bytes differ")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"numpy read {len(list(filter(None, (d / 'manifest.txt').read_text().split())))//4} arrays from ctensor: all equal")


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](Path(sys.argv[2]))
