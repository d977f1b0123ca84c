"""The package as an installer and a type checker see it: the module docstring, the
version, signatures that render, type stubs that name exactly what the module has (with
its parameter names), and the wheel's metadata."""

import ast
import importlib.metadata
import inspect
import pathlib
import re

import ctensor

STUB = pathlib.Path(__file__).resolve().parents[1] / "ctensor.pyi"
CARGO = pathlib.Path(__file__).resolve().parents[2] / "Cargo.toml"


def test_module_docstring_and_version():
    assert ctensor.__doc__.startswith("ctensor: tensors whose element type")
    assert "numpy.sqrt(t)" in ctensor.__doc__
    version = re.search(r'^version = "(.+)"', CARGO.read_text(), re.M).group(1)
    assert ctensor.__version__ == version
    assert "__version__" in ctensor.__all__


def runtime_functions():
    return {
        n: getattr(ctensor, n)
        for n in ctensor.__all__
        if callable(getattr(ctensor, n)) and not isinstance(getattr(ctensor, n), type)
    }


def test_signatures_render_with_their_real_defaults():
    for name, f in runtime_functions().items():
        sig = inspect.signature(f)
        for p in sig.parameters.values():
            assert p.default is not Ellipsis, f"{name}{sig}"
    assert str(inspect.signature(ctensor.fft)) == "(a, axis=-1, norm=None)"
    assert str(inspect.signature(ctensor.Tensor)) == "(data, dtype=None, device='cpu')"


def stub_tree():
    return ast.parse(STUB.read_text())


def params(node):
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return [n for n in names if n not in ("self", "cls")]


def runtime_params(f):
    out = []
    for p in inspect.signature(f).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
        else:
            out.append(p.name)
    return [n for n in out if n not in ("self", "cls")]


def test_stubs_name_exactly_the_module_and_its_parameters():
    tree = stub_tree()
    functions, classes = {}, {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
    runtime = runtime_functions()
    assert set(functions) == set(runtime), set(functions) ^ set(runtime)
    for name, defs in functions.items():
        want = runtime_params(runtime[name])
        for d in defs:  # every overload has the runtime's parameters
            assert params(d) == want, (name, params(d), want)
    types = {n for n in ctensor.__all__ if isinstance(getattr(ctensor, n), type)}
    assert set(classes) == types, set(classes) ^ types
    # Tensor: every public attribute at run time is in the stub and the other way round;
    # every method's parameters match.
    cls = classes["Tensor"]
    stubbed = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef):
            stubbed.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign):
            stubbed.setdefault(node.target.id, [])
    public = {n for n in dir(ctensor.Tensor) if not n.startswith("_")}
    assert public <= set(stubbed), public - set(stubbed)
    for name, defs in stubbed.items():
        if name == "__new__":
            continue
        assert hasattr(ctensor.Tensor, name), name
        attr = getattr(ctensor.Tensor, name)
        if name.startswith("__") or not callable(attr) or isinstance(attr, property):
            continue
        try:
            want = runtime_params(attr)
        except ValueError:  # a slot wrapper without a signature
            continue
        for d in defs:
            if any(isinstance(x, ast.Name) and x.id == "overload" for x in d.decorator_list):
                continue
            assert params(d) == want, (name, params(d), want)


def test_wheel_metadata():
    meta = importlib.metadata.metadata("ctensor")
    assert meta["Name"] == "ctensor"
    assert "run-time dtype and device" in meta["Summary"]
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert any(r.startswith("numpy") for r in meta.get_all("Requires-Dist"))
    assert "pip install ./python" in meta.get_payload()
    assert "Typing :: Typed" in meta.get_all("Classifier")
