"""ctensor's namespace of the Python array API standard (2023.12): what
`Tensor.__array_namespace__()` returns, so that libraries written against the standard
(SciPy's array-API paths, scikit-learn, array-api-compat users) accept tensors.

Every function returns tensors. Functions ctensor has kernels for (arithmetic, the
element-wise functions of `ctensor`, comparisons, matmul, reductions, cholesky, eigh,
qr, solve, svd, the complex FFTs, creation) run as ctensor's ops on either device; the
rest run in NumPy on views of host tensors through NumPy's dispatch protocols, and a GPU
tensor given to one of those is a TypeError, never a silent copy.

Not in this namespace, because ctensor has no such types: `bool` (comparisons give int32
0/1 masks), `int8`, `int16`, `uint8` ... `uint64`.

This file is compiled into the extension and run as the module `ctensor.array_api`, with
the extension module itself as `_ct`.
"""

import builtins as _builtins
import math as _math
from collections import namedtuple as _namedtuple

import numpy as _np

__array_api_version__ = "2023.12"

_Tensor = _ct.Tensor  # noqa: F821 (set by the extension before this file runs)

# --- data types and constants ---------------------------------------------------------

float32 = _np.dtype("float32")
float64 = _np.dtype("float64")
complex64 = _np.dtype("complex64")
complex128 = _np.dtype("complex128")
int32 = _np.dtype("int32")
int64 = _np.dtype("int64")

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

_DEFAULTS = {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing": int64}


def __array_namespace_info__():
    """The namespace's inspection object (the standard's `__array_namespace_info__`)."""
    return _Info()


class _Info:
    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self):
        return "cpu"

    def devices(self):
        return ["cpu", "gpu"] if _ct.gpu_available() else ["cpu"]  # noqa: F821

    def default_dtypes(self, *, device=None):
        return dict(_DEFAULTS)

    def dtypes(self, *, device=None, kind=None):
        every = {
            "float32": float32,
            "float64": float64,
            "complex64": complex64,
            "complex128": complex128,
            "int32": int32,
            "int64": int64,
        }
        if kind is None:
            return every
        return {k: v for k, v in every.items() if isdtype(v, kind)}


# --- conversions ----------------------------------------------------------------------


def _t(x):
    """`x` as a tensor (a tensor itself; an array shared; anything else copied)."""
    if isinstance(x, _Tensor):
        return x
    return asarray(x)


def _operand(x):
    """A binary operand: Python numbers stay numbers (weakly typed), the rest tensors."""
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, _np.generic):
        return x
    return _t(x)


def _out(r):
    """A result as a tensor (NumPy scalars and arrays too; bools as int32 masks)."""
    if isinstance(r, _Tensor):
        return r
    if isinstance(r, (_np.ndarray, _np.generic)):
        a = _np.asarray(r)
        if a.dtype.kind == "b":
            return _ct.Tensor(a.astype(_np.int32)) != 0  # noqa: F821 (a mask)
        return _ct.Tensor(a)  # noqa: F821
    if isinstance(r, tuple):
        items = tuple(_out(x) for x in r)
        return type(r)(*items) if hasattr(r, "_fields") else items
    if isinstance(r, list):
        return [_out(x) for x in r]
    return r


def _device_of(x):
    return x.device if isinstance(x, _Tensor) else "cpu"


def _to(t, device):
    return t if device is None or t.device == device else t.to(device)


# --- creation -------------------------------------------------------------------------


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """A tensor of `obj`: a tensor or array is shared unless `copy=True` or a new type
    or device needs a copy (then `copy=False` is a ValueError); Python data is copied."""
    if isinstance(obj, _Tensor) or hasattr(obj, "__dlpack__"):
        t = obj if isinstance(obj, _Tensor) else _ct.from_dlpack(obj)  # noqa: F821
        need = (dtype is not None and t.dtype != _np.dtype(dtype)) or (
            device is not None and t.device != device
        )
        if need and copy is False:
            raise ValueError("asarray(copy=False) cannot change the type or the device")
        if dtype is not None and t.dtype != _np.dtype(dtype):
            t = t.astype(dtype)
        elif copy:
            t = t.copy()
        return _to(t, device)
    if copy is False:
        raise ValueError("asarray(copy=False) of Python data: it must be copied")
    a = _np.asarray(obj)
    if dtype is None:
        if a.dtype.kind == "b":
            return _ct.Tensor(a.astype(_np.int32), device=device or "cpu") != 0  # noqa: F821
        if a.dtype.kind in "iu":
            dtype = int64
        elif a.dtype.kind == "f" and a.dtype != float32:
            dtype = float64
        elif a.dtype.kind == "c" and a.dtype != complex64:
            dtype = complex128
    return _ct.Tensor(a, dtype=dtype, device=device or "cpu")  # noqa: F821


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def zeros(shape, *, dtype=None, device=None):
    return _ct.zeros(_shape(shape), dtype=dtype or float64, device=device or "cpu")  # noqa: F821


def empty(shape, *, dtype=None, device=None):
    return zeros(shape, dtype=dtype, device=device)


def ones(shape, *, dtype=None, device=None):
    return full(shape, 1, dtype=dtype or float64, device=device)


def full(shape, fill_value, *, dtype=None, device=None):
    if dtype is None:
        if isinstance(fill_value, bool):
            raise TypeError("ctensor has no bool dtype; give dtype=int32 for a 0/1 tensor")
        dtype = {int: int64, float: float64, complex: complex128}.get(type(fill_value), float64)
    t = zeros(shape, dtype=dtype, device=device)
    t[...] = fill_value
    return t


def zeros_like(x, /, *, dtype=None, device=None):
    return zeros(x.shape, dtype=dtype or x.dtype, device=device or _device_of(x))


def empty_like(x, /, *, dtype=None, device=None):
    return zeros_like(x, dtype=dtype, device=device)


def ones_like(x, /, *, dtype=None, device=None):
    return full(x.shape, 1, dtype=dtype or x.dtype, device=device or _device_of(x))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device or _device_of(x))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    return _to(_ct.Tensor(_np.eye(n_rows, n_cols, k=k, dtype=dtype or float64)), device)  # noqa: F821


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    a = _np.arange(start, stop, step) if stop is not None else _np.arange(start, step=step)
    return asarray(a, dtype=dtype, device=device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    if dtype is None:
        dtype = complex128 if isinstance(start, complex) or isinstance(stop, complex) else float64
    return asarray(_np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device=device)


def from_dlpack(x, /, *, device=None, copy=None):
    t = _ct.from_dlpack(x)  # noqa: F821
    if copy:
        t = t.copy()
    return _to(t, device)


def tril(x, /, *, k=0):
    return _out(_np.tril(_t(x), k=k))


def triu(x, /, *, k=0):
    return _out(_np.triu(_t(x), k=k))


def meshgrid(*arrays, indexing="xy"):
    return [_out(m) for m in _np.meshgrid(*[_t(a) for a in arrays], indexing=indexing)]


# --- data type functions --------------------------------------------------------------


def astype(x, dtype, /, *, copy=True, device=None):
    t = _t(x)
    if not copy and t.dtype == _np.dtype(dtype):
        return _to(t, device)
    return _to(t.astype(dtype), device)


def can_cast(from_, to, /):
    f = from_.dtype if isinstance(from_, _Tensor) else _np.dtype(from_)
    return bool(_np.can_cast(f, _np.dtype(to), casting="safe"))


FinfoObject = _namedtuple("finfo_object", ["bits", "eps", "max", "min", "smallest_normal", "dtype"])
IinfoObject = _namedtuple("iinfo_object", ["bits", "max", "min", "dtype"])


def finfo(type, /):
    """Machine limits of a floating type, as Python numbers."""
    f = _np.finfo(type.dtype if isinstance(type, _Tensor) else type)
    real = _np.dtype(f.dtype)
    return FinfoObject(
        int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal), real
    )


def iinfo(type, /):
    """Machine limits of an integer type, as Python numbers."""
    i = _np.iinfo(type.dtype if isinstance(type, _Tensor) else type)
    return IinfoObject(int(i.bits), int(i.max), int(i.min), _np.dtype(i.dtype))


def isdtype(dtype, kind):
    dtype = _np.dtype(dtype)
    if isinstance(kind, tuple):
        return _builtins.any(isdtype(dtype, k) for k in kind)
    if not isinstance(kind, str):
        return dtype == _np.dtype(kind)
    return {
        "bool": dtype.kind == "b",
        "signed integer": dtype.kind == "i",
        "unsigned integer": dtype.kind == "u",
        "integral": dtype.kind in "iu",
        "real floating": dtype.kind == "f",
        "complex floating": dtype.kind == "c",
        "numeric": dtype.kind in "iufc",
    }[kind]


def result_type(*arrays_and_dtypes):
    types = [
        a.dtype if isinstance(a, _Tensor) else _np.dtype(a) for a in arrays_and_dtypes
    ]
    r = types[0]
    for t in types[1:]:
        r = _ct.result_type(r, t)  # noqa: F821
    return r


# --- element-wise functions -----------------------------------------------------------


def _unary(np_name, doc):
    f = getattr(_np, np_name)

    def op(x, /):
        return _out(f(_t(x)))

    op.__doc__ = doc
    return op


def _binary(np_name, doc):
    f = getattr(_np, np_name)

    def op(x1, x2, /):
        return _out(f(_operand(x1), _operand(x2)))

    op.__doc__ = doc
    return op


for _name, _np_name in {
    "abs": "absolute",
    "acos": "arccos",
    "acosh": "arccosh",
    "asin": "arcsin",
    "asinh": "arcsinh",
    "atan": "arctan",
    "atanh": "arctanh",
    "bitwise_invert": "invert",
    "ceil": "ceil",
    "conj": "conjugate",
    "cos": "cos",
    "cosh": "cosh",
    "exp": "exp",
    "expm1": "expm1",
    "floor": "floor",
    "isfinite": "isfinite",
    "isinf": "isinf",
    "isnan": "isnan",
    "log": "log",
    "log1p": "log1p",
    "log2": "log2",
    "log10": "log10",
    "logical_not": "logical_not",
    "negative": "negative",
    "positive": "positive",
    "round": "rint",
    "sign": "sign",
    "signbit": "signbit",
    "sin": "sin",
    "sinh": "sinh",
    "square": "square",
    "sqrt": "sqrt",
    "tan": "tan",
    "tanh": "tanh",
    "trunc": "trunc",
}.items():
    globals()[_name] = _unary(_np_name, f"Element-wise {_name} (NumPy's {_np_name}).")

for _name, _np_name in {
    "add": "add",
    "atan2": "arctan2",
    "bitwise_and": "bitwise_and",
    "bitwise_left_shift": "left_shift",
    "bitwise_or": "bitwise_or",
    "bitwise_right_shift": "right_shift",
    "bitwise_xor": "bitwise_xor",
    "copysign": "copysign",
    "divide": "divide",
    "equal": "equal",
    "floor_divide": "floor_divide",
    "greater": "greater",
    "greater_equal": "greater_equal",
    "hypot": "hypot",
    "less": "less",
    "less_equal": "less_equal",
    "logaddexp": "logaddexp",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "maximum": "maximum",
    "minimum": "minimum",
    "multiply": "multiply",
    "not_equal": "not_equal",
    "pow": "power",
    "remainder": "remainder",
    "subtract": "subtract",
}.items():
    globals()[_name] = _binary(_np_name, f"Element-wise {_name} (NumPy's {_np_name}).")


def real(x, /):
    """The real parts (a view of a complex tensor)."""
    return _t(x).real


def imag(x, /):
    """The imaginary parts (a view of a complex tensor)."""
    return _t(x).imag


def clip(x, /, min=None, max=None):
    t = _t(x)
    if min is None and max is None:
        return t.copy()
    return _out(_np.clip(t, min, max))


# --- statistics and utilities ---------------------------------------------------------


def sum(x, /, *, axis=None, dtype=None, keepdims=False):
    return _t(x).sum(axis=axis, dtype=dtype, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    return _t(x).mean(axis=axis, keepdims=keepdims)


def max(x, /, *, axis=None, keepdims=False):
    return _t(x).max(axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):
    return _t(x).min(axis=axis, keepdims=keepdims)


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    return _out(_np.prod(_t(x), axis=axis, dtype=dtype, keepdims=keepdims))


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _out(_np.std(_t(x), axis=axis, ddof=correction, keepdims=keepdims))


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _out(_np.var(_t(x), axis=axis, ddof=correction, keepdims=keepdims))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    t = _t(x)
    if axis is None:
        if t.ndim > 1:
            raise ValueError("cumulative_sum needs axis= for a tensor of more than one dimension")
        axis = 0
    r = _np.cumsum(t, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(r.shape)
        shape[axis] = 1
        r = _np.concatenate([_np.zeros(shape, dtype=_np.asarray(r).dtype), _np.asarray(r)], axis=axis)
    return _out(r)


def all(x, /, *, axis=None, keepdims=False):
    return _out(_np.all(_t(x), axis=axis, keepdims=keepdims))


def any(x, /, *, axis=None, keepdims=False):
    return _out(_np.any(_t(x), axis=axis, keepdims=keepdims))


# --- manipulation ---------------------------------------------------------------------


def reshape(x, /, shape, *, copy=None):
    t = _t(x)
    r = t.copy().reshape(tuple(shape)) if copy else t.reshape(tuple(shape))
    return r


def permute_dims(x, /, axes):
    return _out(_np.transpose(_t(x), axes))


def matrix_transpose(x, /):
    return _out(_np.swapaxes(_t(x), -1, -2))


def expand_dims(x, /, axis=0):
    return _out(_np.expand_dims(_t(x), axis))


def squeeze(x, /, axis):
    return _out(_np.squeeze(_t(x), axis=axis))


def broadcast_to(x, /, shape):
    return _out(_np.broadcast_to(_t(x), tuple(shape)))


def broadcast_arrays(*arrays):
    return [_out(a) for a in _np.broadcast_arrays(*[_t(a) for a in arrays])]


def concat(arrays, /, *, axis=0):
    return _out(_np.concatenate([_t(a) for a in arrays], axis=axis))


def stack(arrays, /, *, axis=0):
    return _out(_np.stack([_t(a) for a in arrays], axis=axis))


def unstack(x, /, *, axis=0):
    t = _t(x)
    axis = axis % t.ndim
    return tuple(t[(slice(None),) * axis + (i,)] for i in range(t.shape[axis]))


def flip(x, /, *, axis=None):
    return _out(_np.flip(_t(x), axis=axis))


def roll(x, /, shift, *, axis=None):
    return _out(_np.roll(_t(x), shift, axis=axis))


def moveaxis(x, source, destination, /):
    return _out(_np.moveaxis(_t(x), source, destination))


def repeat(x, repeats, /, *, axis=None):
    return _out(_np.repeat(_t(x), repeats, axis=axis))


def tile(x, repetitions, /):
    return _out(_np.tile(_t(x), repetitions))


def take(x, indices, /, *, axis=None):
    return _out(_np.take(_t(x), _t(indices), axis=axis))


# --- searching, sorting, sets ---------------------------------------------------------


def argmax(x, /, *, axis=None, keepdims=False):
    return _out(_np.argmax(_t(x), axis=axis, keepdims=keepdims))


def argmin(x, /, *, axis=None, keepdims=False):
    return _out(_np.argmin(_t(x), axis=axis, keepdims=keepdims))


def nonzero(x, /):
    return _out(_np.nonzero(_t(x)))


def where(condition, x1, x2, /):
    return _out(_np.where(_t(condition), _operand(x1), _operand(x2)))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    return _out(_np.searchsorted(_t(x1), _t(x2), side=side, sorter=sorter))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    r = _np.sort(_t(x), axis=axis, kind="stable" if stable else None)
    return _out(_np.flip(r, axis=axis) if descending else r)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    t = _t(x)
    if descending:
        # Stable descending order: sort the negated values (ties keep their order).
        return _out(_np.argsort(-_np.asarray(t), axis=axis, kind="stable"))
    return _out(_np.argsort(t, axis=axis, kind="stable" if stable else None))


UniqueAllResult = _namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = _namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, /):
    return _out(_np.unique(_np.asarray(_t(x))))


def unique_counts(x, /):
    v, c = _np.unique(_np.asarray(_t(x)), return_counts=True)
    return UniqueCountsResult(_out(v), _out(c))


def unique_inverse(x, /):
    a = _np.asarray(_t(x))
    v, inv = _np.unique(a, return_inverse=True)
    return UniqueInverseResult(_out(v), _out(inv.reshape(a.shape)))


def unique_all(x, /):
    a = _np.asarray(_t(x))
    v, i, inv, c = _np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    return UniqueAllResult(_out(v), _out(i), _out(inv.reshape(a.shape)), _out(c))


# --- linear algebra -------------------------------------------------------------------


def matmul(x1, x2, /):
    return _ct.matmul(_t(x1), _t(x2))  # noqa: F821


def tensordot(x1, x2, /, *, axes=2):
    return _out(_np.tensordot(_t(x1), _t(x2), axes=axes))


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along `axis` (the first conjugated), the other axes
    broadcast; the result keeps the operands' promoted type."""
    a, b = _t(x1), _t(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot needs operands of at least one dimension")
    n1, n2 = a.shape[axis], b.shape[axis]
    if n1 != n2:
        raise ValueError(f"vecdot: axis {axis} has {n1} entries in x1 and {n2} in x2")
    return (a.conj() * b).sum(axis=axis, dtype=result_type(a, b))


def _per_matrix(f, x):
    """`f` of every matrix of a stack `[..., m, n]` (ctensor's factorizations take one
    matrix), results stacked along the same leading axes; tuples element by element."""
    t = _t(x)
    if t.ndim <= 2:
        return f(t)
    batch = t.shape[:-2]
    count = _math.prod(batch)
    if count == 0 or _math.prod(t.shape[-2:]) == 0:
        # No matrix, or only empty ones (however many): no per-matrix work.
        # Shapes and types from one stand-in matrix (the identity: every factorization
        # takes it).
        stand_in = _to(eye(t.shape[-2], t.shape[-1], dtype=t.dtype), t.device)
        one = f(stand_in)
        make = lambda r: zeros(batch + r.shape, dtype=r.dtype, device=r.device)  # noqa: E731
        return type(one)(*map(make, one)) if isinstance(one, tuple) else make(one)
    flat = t.reshape((count,) + t.shape[-2:])
    results = [f(flat[i]) for i in range(count)]

    def join(parts):
        # Written into place (on either device), not through NumPy's stack.
        out = zeros((count,) + parts[0].shape, dtype=parts[0].dtype, device=parts[0].device)
        for i, p in enumerate(parts):
            out[i] = p
        return out.reshape(batch + parts[0].shape)

    first = results[0]
    if isinstance(first, tuple):
        return type(first)(*[join([r[k] for r in results]) for k in range(len(first))])
    return join(results)


class _Linalg:
    """The `linalg` extension: ctensor's Cholesky, eigh, QR, solve and SVD; the rest
    NumPy's on host views."""

    EighResult = _namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
    QRResult = _namedtuple("QRResult", ["Q", "R"])
    SVDResult = _namedtuple("SVDResult", ["U", "S", "Vh"])
    SlogdetResult = _namedtuple("SlogdetResult", ["sign", "logabsdet"])

    @staticmethod
    def cholesky(x, /, *, upper=False):
        return _per_matrix(lambda m: _ct.cholesky(m, lower=not upper), x)  # noqa: F821

    @staticmethod
    def eigh(x, /):
        return _Linalg.EighResult(*_ct.eigh(_t(x)))  # noqa: F821

    @staticmethod
    def eigvalsh(x, /):
        return _ct.eigh(_t(x), eigvals_only=True)  # noqa: F821

    @staticmethod
    def qr(x, /, *, mode="reduced"):
        return _per_matrix(lambda m: _Linalg.QRResult(*_ct.qr(m, mode=mode)), x)  # noqa: F821

    @staticmethod
    def solve(x1, x2, /):
        return _ct.solve(_t(x1), _t(x2))  # noqa: F821

    @staticmethod
    def svd(x, /, *, full_matrices=True):
        return _per_matrix(
            lambda m: _Linalg.SVDResult(*_ct.svd(m, full_matrices=full_matrices)), x  # noqa: F821
        )

    @staticmethod
    def svdvals(x, /):
        return _per_matrix(lambda m: _ct.svd(m, compute_uv=False), x)  # noqa: F821

    @staticmethod
    def det(x, /):
        return _out(_np.linalg.det(_t(x)))

    @staticmethod
    def slogdet(x, /):
        s, l = _np.linalg.slogdet(_np.asarray(_t(x)))
        return _Linalg.SlogdetResult(_out(s), _out(l))

    @staticmethod
    def inv(x, /):
        return _out(_np.linalg.inv(_t(x)))

    @staticmethod
    def pinv(x, /, *, rtol=None):
        return _out(_np.linalg.pinv(_t(x), rtol=rtol) if rtol is not None else _np.linalg.pinv(_t(x)))

    @staticmethod
    def matrix_norm(x, /, *, keepdims=False, ord="fro"):
        return _out(_np.linalg.norm(_t(x), ord=ord, axis=(-2, -1), keepdims=keepdims))

    @staticmethod
    def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
        t = _t(x)
        axes = tuple(range(t.ndim)) if axis is None else axis
        axes = (axes,) if isinstance(axes, int) else tuple(a % t.ndim for a in axes)
        # Over several axes: those moved to the end and flattened into one.
        rest = [d for d in range(t.ndim) if d not in axes]
        a = _np.transpose(_np.asarray(t), rest + list(axes))
        a = a.reshape(a.shape[: len(rest)] + (-1,))
        r = _np.linalg.norm(a, ord=ord, axis=-1)
        if keepdims:
            r = _np.reshape(r, tuple(1 if d in axes else t.shape[d] for d in range(t.ndim)))
        return _out(_np.asarray(r, dtype=_np.asarray(t).real.dtype))

    @staticmethod
    def matrix_power(x, n, /):
        return _out(_np.linalg.matrix_power(_t(x), n))

    @staticmethod
    def matrix_rank(x, /, *, rtol=None):
        return _out(_np.linalg.matrix_rank(_t(x), rtol=rtol))

    @staticmethod
    def outer(x1, x2, /):
        return _out(_np.outer(_t(x1), _t(x2)))

    @staticmethod
    def trace(x, /, *, offset=0, dtype=None):
        return _out(_np.trace(_t(x), offset=offset, axis1=-2, axis2=-1, dtype=dtype))

    @staticmethod
    def diagonal(x, /, *, offset=0):
        return _out(_np.diagonal(_t(x), offset=offset, axis1=-2, axis2=-1))

    @staticmethod
    def cross(x1, x2, /, *, axis=-1):
        return _out(_np.cross(_t(x1), _t(x2), axis=axis))

    matmul = staticmethod(matmul)
    matrix_transpose = staticmethod(matrix_transpose)
    tensordot = staticmethod(tensordot)
    vecdot = staticmethod(vecdot)


linalg = _Linalg()


def _one_d(ours, theirs):
    """A 1-D transform: ctensor's without `n`, NumPy's with it."""

    def f(x, /, *, n=None, axis=-1, norm="backward"):
        if n is None:
            return ours(_t(x), axis=axis, norm=norm)
        return _out(theirs(_t(x), n=n, axis=axis, norm=norm))

    f.__name__ = theirs.__name__
    return staticmethod(f)


def _n_d(ours, theirs):
    """An n-D transform: ctensor's without `s`, NumPy's with it (over the last len(s)
    axes when `axes` is not given, as the standard says)."""

    def f(x, /, *, s=None, axes=None, norm="backward"):
        if s is None:
            return ours(_t(x), axes=axes, norm=norm)
        if axes is None:
            axes = tuple(range(-len(s), 0))
        return _out(theirs(_t(x), s=s, axes=axes, norm=norm))

    f.__name__ = theirs.__name__
    return staticmethod(f)


class _Fft:
    """The `fft` extension: ctensor's complex transforms (fft, ifft, fftn, ifftn without
    `n`/`s`); the rest NumPy's on host views."""

    fft = _one_d(_ct.fft, _np.fft.fft)  # noqa: F821
    ifft = _one_d(_ct.ifft, _np.fft.ifft)  # noqa: F821
    fftn = _n_d(_ct.fftn, _np.fft.fftn)  # noqa: F821
    ifftn = _n_d(_ct.ifftn, _np.fft.ifftn)  # noqa: F821


def _numpy_one_d(theirs):
    def f(x, /, *, n=None, axis=-1, norm="backward"):
        return _out(theirs(_t(x), n=n, axis=axis, norm=norm))

    f.__name__ = theirs.__name__
    return staticmethod(f)


def _numpy_n_d(theirs):
    def f(x, /, *, s=None, axes=None, norm="backward"):
        if s is not None and axes is None:
            axes = tuple(range(-len(s), 0))
        return _out(theirs(_t(x), s=s, axes=axes, norm=norm))

    f.__name__ = theirs.__name__
    return staticmethod(f)


def _numpy_shift(theirs):
    def f(x, /, *, axes=None):
        return _out(theirs(_t(x), axes=axes))

    f.__name__ = theirs.__name__
    return staticmethod(f)


def _numpy_freq(theirs):
    def f(n, /, *, d=1.0, dtype=None, device=None):
        return asarray(theirs(n, d=d), dtype=dtype or float64, device=device)

    f.__name__ = theirs.__name__
    return staticmethod(f)


for _f in [_np.fft.rfft, _np.fft.irfft, _np.fft.hfft, _np.fft.ihfft]:
    setattr(_Fft, _f.__name__, _numpy_one_d(_f))
for _f in [_np.fft.rfftn, _np.fft.irfftn]:
    setattr(_Fft, _f.__name__, _numpy_n_d(_f))
for _f in [_np.fft.fftshift, _np.fft.ifftshift]:
    setattr(_Fft, _f.__name__, _numpy_shift(_f))
for _f in [_np.fft.fftfreq, _np.fft.rfftfreq]:
    setattr(_Fft, _f.__name__, _numpy_freq(_f))
fft = _Fft()

del _name, _np_name, _f
