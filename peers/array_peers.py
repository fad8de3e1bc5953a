"""NumPy and PyTorch, as people write it: `(a - b)**2` and `a - b`.

Both broadcast NumPy's way only: the 'none' cases (equal shapes) run the same way; there is no
pdpd. NumPy has no bfloat16: its bf16 column uses ml_dtypes.bfloat16 (the NumPy extension type
that JAX, ONNX and TensorFlow use). PyTorch is Debian's python3-torch (CPU).
"""

import numpy as np

import reference
from cases import DTYPES, inputs_for, shape_cases
from compare import Groups


def _numpy_versions():
    import ml_dtypes
    return {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__}


def _torch_versions():
    import torch
    return {"torch": torch.__version__, "torch threads": torch.get_num_threads()}


def versions():
    out = _numpy_versions()
    try:
        out.update(_torch_versions())
    except ImportError as error:
        out["torch"] = f"not importable: {error}"
    return out


def _numpy_op(op, dtype, a, b):
    if dtype == "bf16":
        import ml_dtypes
        a, b = a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16)
    with np.errstate(all="ignore"):
        d = a - b
        out = d ** 2 if op == "squared_difference" else d
    out = np.asarray(out)
    if out.dtype != a.dtype:
        # NumPy 1.x's value-based casting: a 0-d float16 difference squared is float64.
        raise TypeError(f"NumPy returns {out.dtype} for {a.dtype} inputs of shapes {a.shape}, {b.shape}")
    return out.view(np.uint16) if dtype == "bf16" else out


TORCH_TYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
               "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
               "u16": "uint16", "u32": "uint32", "u64": "uint64"}


def _to_torch(torch, dtype, x):
    if dtype == "bf16":
        return torch.from_numpy(np.array(x, order="C").view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(np.array(x, order="C"))


def _torch_op(op, dtype, a, b):
    import torch
    if not hasattr(torch, TORCH_TYPES[dtype]):
        raise TypeError(f"torch {torch.__version__} has no dtype torch.{TORCH_TYPES[dtype]}")
    ta, tb = _to_torch(torch, dtype, a), _to_torch(torch, dtype, b)
    d = ta - tb
    out = d ** 2 if op == "squared_difference" else d
    if dtype == "bf16":
        return out.view(torch.int16).numpy().view(np.uint16)
    if str(out.dtype) != f"torch.{TORCH_TYPES[dtype]}":
        raise TypeError(f"torch returns {out.dtype} for {TORCH_TYPES[dtype]} inputs")
    return out.numpy()


def _run(peer_op):
    groups = Groups()
    cases = shape_cases(modes=("none", "numpy"))
    for dtype in DTYPES:
        for item in inputs_for(dtype, cases):
            for op in ("squared_difference", "subtract"):
                try:
                    theirs = peer_op(op, dtype, item.a, item.b)
                except Exception as error:  # noqa: BLE001 - the peer refuses: recorded
                    groups.reject(op, dtype, item.case.mode, f"{type(error).__name__}: {error}")
                    continue
                ours = reference.run(op, dtype, item.case, item.a, item.b)
                groups.add(op, dtype, item.case, ours, theirs, item.a, item.b)
    return groups


def run():
    results = {"numpy": _run(_numpy_op)}
    try:
        import torch  # noqa: F401
    except ImportError:
        return results
    results["pytorch"] = _run(_torch_op)
    return results
