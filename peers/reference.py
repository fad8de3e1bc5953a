"""sqdiff's side of every comparison: the Python API, called as a user would."""

import inspect

import numpy as np
import sqdiff

_AXIS_KEYWORD = ("broadcast_axis" if "broadcast_axis" in inspect.signature(sqdiff.subtract).parameters
                 else "axis")


def run(op, dtype, case, a, b):
    """sqdiff's result for one case (bf16 as uint16 bits)."""
    kwargs = {"broadcast": case.mode, _AXIS_KEYWORD: case.axis}
    if dtype == "bf16":
        kwargs["dtype"] = "bfloat16"
    return np.asarray(getattr(sqdiff, op)(a, b, **kwargs))
