"""The package's surface: signatures, help(), version, SIMD target."""

import inspect
import pydoc
import re

import numpy as np

import sqdiff
from support import source_dir


def unannotated(function):
    """The signature without its type hints (test_typing.py checks those)."""
    sig = inspect.signature(function)
    return str(sig.replace(parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
                           return_annotation=sig.empty))


def test_signatures():
    for op in (sqdiff.squared_difference, sqdiff.subtract):
        assert unannotated(op) == "(a, b, *, broadcast='numpy', broadcast_axis=-1, out=None, threads=None, dtype=None, axis=None)"
    assert unannotated(sqdiff.broadcast_shape) == "(shape_a, shape_b, broadcast='numpy', broadcast_axis=-1, *, axis=None)"


def test_help_reads_well():
    text = pydoc.render_doc(sqdiff.squared_difference, renderer=pydoc.plaintext)
    assert ("squared_difference(a: 'ArrayLike', b: 'ArrayLike', *, broadcast: 'BroadcastMode' = 'numpy', "
            "broadcast_axis: 'SupportsIndex' = -1, out: 'Optional[NDArray[Any]]' = None, threads: "
            "'Optional[SupportsIndex]' = None, dtype: 'DTypeLike' = None, axis: 'Optional[SupportsIndex]' = None) "
            "-> 'NDArray[Any]'") in text
    for words in ["Parameters", "Returns", "Raises", "Examples", "bfloat16", "uint16", "sqdiff.Error",
                  "in place", "GIL", "np.broadcast_to", "0-d array"]:
        assert words in text, words
    assert "Element-wise difference" in pydoc.render_doc(sqdiff.subtract, renderer=pydoc.plaintext)
    module_help = pydoc.render_doc(sqdiff, renderer=pydoc.plaintext)
    assert "squared_difference" in module_help and "bfloat16" in module_help


def test_version_matches_the_library():
    header = (source_dir() / "include" / "sqdiff" / "version.hpp").read_text()
    parts = [re.search(rf"#define SQDIFF_VERSION_{p} (\d+)", header).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    assert sqdiff.__version__ == ".".join(parts)


def test_simd_target():
    targets = sqdiff.compiled_simd_targets()
    assert isinstance(targets, list) and targets and all(isinstance(t, str) for t in targets)
    assert sqdiff.simd_target() in targets


def test_all_is_complete():
    # Submodules (sqdiff.dask, once some test has imported it) are not names of the package's own.
    public = {name for name in dir(sqdiff)
              if not name.startswith("_") and not inspect.ismodule(getattr(sqdiff, name))}
    assert public - {"np"} <= set(sqdiff.__all__) | {"Error"}
    for name in sqdiff.__all__:
        assert hasattr(sqdiff, name)
    assert not hasattr(sqdiff, "np")  # numpy is imported privately


def documented_names():
    """The names docs/python.md's API block lists (`sqdiff.<name>` at the start of a line)."""
    text = (source_dir() / "docs" / "python.md").read_text()
    block = text.split("\n## API\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    return set(re.findall(r"^sqdiff\.(\w+)", block, re.M))


def test_dir_shows_only_documented_names():
    """Every public name of the package is one docs/python.md documents, and __all__ is
    those names; the rest of dir(sqdiff) is private (_name) or dunder. sqdiff.dask, a
    documented submodule, is there once imported."""
    documented = documented_names()
    assert "squared_difference" in documented and "__version__" in documented
    public = {name for name in dir(sqdiff) if not name.startswith("_")}
    assert public - {"dask"} == documented - {"__version__"}
    assert set(sqdiff.__all__) == documented


def test_result_is_a_fresh_c_contiguous_array():
    a = np.arange(12, dtype=np.float64).reshape(3, 4).T
    got = sqdiff.subtract(a, a)
    assert got.flags.c_contiguous and got.flags.owndata and got.flags.writeable
    assert not np.shares_memory(got, a)
