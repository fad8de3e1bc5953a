"""The CMake-built module under NumPy 2 (issue 21, item 8).

The CMake route builds with Debian's pybind11 2.10, which knows only NumPy 1's
dtype struct; the binding reads the fields NumPy 2 moved itself
(python/src/dtype_layout.hpp). The CTest run tests that module under Debian's
NumPy 1.24; this test, in scripts/test.sh's venv stage (NumPy 2, the pip wheel
under test), runs it in a fresh interpreter of the same venv: SQDIFF_CMAKE_PYTHON
names the CMake build's python/ directory (<build>/python). There every dtype,
byte order and layout must give the oracles' bits in the element-wise
functions, the reductions, the gradients and the partial sums, and the dtypes
sqdiff does not support must still be refused.

Run as a script (what the test does), it performs those checks on the sqdiff
it imports and prints how many it made.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

CMAKE_PYTHON = os.environ.get("SQDIFF_CMAKE_PYTHON")
TESTS = Path(__file__).resolve().parent


@pytest.mark.skipif(int(np.__version__.split(".")[0]) < 2,
                    reason="NumPy 1: the CMake-built module is the one the whole suite tests")
@pytest.mark.skipif(not CMAKE_PYTHON, reason="SQDIFF_CMAKE_PYTHON (<build>/python) is not set; scripts/test.sh sets it")
def test_the_cmake_built_module_computes_every_dtype_under_numpy2():
    package = Path(CMAKE_PYTHON) / "sqdiff"
    assert list(package.glob("_sqdiff.*.so")), f"SQDIFF_CMAKE_PYTHON: no sqdiff/_sqdiff.*.so in {CMAKE_PYTHON}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([CMAKE_PYTHON, str(TESTS)]))
    # -W error: importing the module under NumPy 2 must not warn either.
    result = subprocess.run([sys.executable, "-W", "error", __file__], env=env, cwd=TESTS, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"sqdiff from {package.resolve()}: "), result.stdout


# --- the checks, run in the subprocess ---------------------------------------

def _check_elementwise(sqdiff, rng):
    from support import DTYPE_NAMES, assert_same_bits, dtype_keyword, oracle, place, random_values

    checks = 0
    for name in DTYPE_NAMES:
        keyword = dtype_keyword(name)
        for op in ("subtract", "squared_difference"):
            for layout in ("c", "f", "reversed", "strided"):
                a = random_values(rng, name, (3, 5))
                b = random_values(rng, name, (5,))
                view, _, _ = place(a, layout, rng)
                result = getattr(sqdiff, op)(view, b, dtype=keyword)
                assert_same_bits(result, oracle(op, a, b, name), name, f"{op} {name} {layout}")
                checks += 1
            if np.dtype(name if name != "bfloat16" else "uint16").itemsize > 1:
                # Byte-swapped and unaligned inputs are copied; a byte-swapped out= is written
                # through a temporary: each is an item size the module must read right.
                a = random_values(rng, name, (4, 3))
                b = random_values(rng, name, (4, 3))
                swapped = a.astype(a.dtype.newbyteorder())
                raw = np.zeros(a.nbytes + 1, np.uint8)
                unaligned = raw[1:].view(a.dtype).reshape(a.shape)
                unaligned[...] = b
                out = np.empty(a.shape, a.dtype.newbyteorder())
                getattr(sqdiff, op)(swapped, unaligned, out=out, dtype=keyword)
                assert_same_bits(out.astype(a.dtype), oracle(op, a, b, name), name, f"{op} {name} swapped")
                checks += 1
    return checks


def _check_bfloat16_arrays(sqdiff, rng):
    try:
        import ml_dtypes
    except ImportError:
        return 0
    from support import assert_same_bits, oracle, random_values

    a = random_values(rng, "bfloat16", (2, 6))
    b = random_values(rng, "bfloat16", (6,))
    result = sqdiff.squared_difference(a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16))
    assert result.dtype == ml_dtypes.bfloat16
    assert_same_bits(result.view(np.uint16), oracle("squared_difference", a, b, "bfloat16"), "bfloat16")
    return 1


def _moderate(rng, name, shape):
    """Values whose integer sums fit the default output types."""
    from support import f32_to_bf16, storage

    if name == "bfloat16":
        return f32_to_bf16(rng.uniform(-50, 50, shape).astype(np.float32))
    if storage(name).kind == "f":
        return rng.uniform(-50, 50, shape).astype(name)
    low = 0 if storage(name).kind == "u" else -50
    return rng.integers(low, 50, shape).astype(name)


def _check_reductions(sqdiff, rng):
    import exact
    from support import DTYPE_NAMES, assert_same_bits, dtype_keyword

    checks = 0
    for name in DTYPE_NAMES:
        a = _moderate(rng, name, (3, 4, 5))
        b = _moderate(rng, name, (4, 1))
        for mean in (False, True):
            function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
            for axis, keepdims in ((None, False), (1, True), ((0, 2), False)):
                result = function(a, b, axis, keepdims=keepdims, dtype=dtype_keyword(name))
                expected = exact.reduce(a, b, name, axis=axis, keepdims=keepdims, mean=mean)
                out_name = name if name in exact.FLOAT_NAMES else expected.dtype.name  # int: int64, uint64, float64
                assert_same_bits(result, expected, out_name, f"{'mean' if mean else 'sum'} {name} axis={axis}")
                checks += 1
        # The exact partial sums behind sqdiff.dask: two halves combined equal one sum.
        keyword = dtype_keyword(name)
        first = sqdiff._partial_sum_squared_difference(a[:2], b, axis=0, dtype=keyword)
        second = sqdiff._partial_sum_squared_difference(a[2:], b, axis=0, dtype=keyword)
        state_dtype = keyword or a.dtype
        finished = sqdiff._finish_partial_sums(state_dtype, sqdiff._combine_partial_sums(state_dtype, first, second),
                                               3, mean=False)
        whole = sqdiff.sum_squared_difference(a, b, 0, dtype=keyword)
        assert finished.dtype == whole.dtype and np.array_equal(finished.view(np.uint8), whole.view(np.uint8)), name
        checks += 1
    return checks


def _check_gradients(sqdiff, rng):
    import exact
    from support import assert_same_bits, dtype_keyword

    checks = 0
    for name in exact.FLOAT_NAMES:
        a = _moderate(rng, name, (2, 3))
        b = _moderate(rng, name, (3,))
        grad = _moderate(rng, name, (2, 3))
        keyword = dtype_keyword(name)
        got = sqdiff.squared_difference_backward(a, b, grad, dtype=keyword)
        for actual, expected in zip(got, exact.squared_difference_backward(a, b, grad, name)):
            assert_same_bits(actual, expected, name, f"squared_difference_backward {name}")
        got = sqdiff.subtract_backward(grad, (2, 3), (3,), dtype=keyword)
        for actual, expected in zip(got, exact.subtract_backward(grad, (2, 3), (3,), name)):
            assert_same_bits(actual, expected, name, f"subtract_backward {name}")
        checks += 2
    return checks


def _check_refusals(sqdiff):
    named_halves = np.dtype((np.int32, {"re": (np.int16, 0), "im": (np.int16, 2)}))  # kind "i", with fields
    record = np.dtype([("x", np.uint8), ("y", np.float64)])
    for dtype in (named_halves, record, np.dtype(bool), np.dtype(np.complex64)):
        values = np.zeros(3, dtype)
        try:
            sqdiff.subtract(values, values)
        except sqdiff.Error as error:
            assert str(error).startswith(f"subtract: unsupported dtype of a: {dtype}; supported: "), str(error)
        else:
            raise AssertionError(f"{dtype} was not refused")
    return 4


def main():
    import sqdiff

    rng = np.random.default_rng(21)
    checks = (_check_elementwise(sqdiff, rng) + _check_bfloat16_arrays(sqdiff, rng) + _check_reductions(sqdiff, rng)
              + _check_gradients(sqdiff, rng) + _check_refusals(sqdiff))
    print(f"sqdiff from {Path(sqdiff.__file__).resolve().parent}: {checks} checks under NumPy {np.__version__}")


if __name__ == "__main__":
    main()
