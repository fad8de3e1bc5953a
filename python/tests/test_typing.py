"""Type hints: mypy sees the package's signatures (py.typed, the stub of the
compiled part, the annotations in the package's modules), accepts typed use
and rejects misuse. Runs the mypy of the interpreter under test (Debian's
python3-mypy in the CMake stage, PyPI's in the venv stage)."""

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import sqdiff

GOOD = textwrap.dedent("""\
    from typing import Any, List, Optional, Tuple

    import numpy as np
    from numpy.typing import NDArray

    import sqdiff

    a = np.zeros((2, 3), dtype=np.float32)
    b = np.ones(3, dtype=np.float32)
    d: NDArray[Any] = sqdiff.squared_difference(a, b, broadcast="numpy", threads=1)
    e: NDArray[Any] = sqdiff.subtract(a, [1.0, 2.0, 3.0], out=np.empty((2, 3), np.float32), dtype=np.float32)
    s: NDArray[Any] = sqdiff.sum_squared_difference(a, b, axis=(0, 1), keepdims=True, dtype="float64")
    m: NDArray[Any] = sqdiff.mean_squared_difference(a, b, axis=-1)
    grads: Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]] = sqdiff.squared_difference_backward(a, b, a, need="a")
    sub: Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]] = sqdiff.subtract_backward(a, (2, 3), (3,))
    mse: Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]] = sqdiff.mean_squared_difference_backward(a, b, need="a")
    shape: Tuple[int, ...] = sqdiff.broadcast_shape((8, 1, 6, 1), [7, 1, 5], broadcast="pdpd", broadcast_axis=0)
    target: str = sqdiff.simd_target()
    targets: List[str] = sqdiff.compiled_simd_targets()
    version: str = sqdiff.__version__
    bits = sqdiff.to_bfloat16_bits([1.0, 2.0])
    values = sqdiff.from_bfloat16_bits(bits)
    try:
        sqdiff.subtract(a, np.zeros(4, np.float32))
    except sqdiff.Error as error:
        message: str = str(error)
    def check(path: str) -> bool:
        report: sqdiff.VerifyReport = sqdiff.verify(path, {"x": a}, runtime="litert", random_seed=1,
                                                    resolver="reference")
        ops: List[sqdiff.VerifiedOp] = report.ops
        return report.passed and all(op.differing == 0 for op in ops)
""")

# Each line is one misuse that mypy must report: a wrong keyword value, a
# result used as the wrong type, an unknown keyword, a missing argument.
BAD = textwrap.dedent("""\
    import numpy as np

    import sqdiff

    a = np.zeros(3, dtype=np.float32)
    sqdiff.squared_difference(a, a, broadcast="bidirectional")
    shape: str = sqdiff.broadcast_shape((2,), (2,))
    sqdiff.subtract(a, a, axes=0)
    sqdiff.mean_squared_difference(a)
    count: int = sqdiff.simd_target()
    passed: str = sqdiff.verify("m.tflite").passed
""")


def run_mypy(tmp_path, source):
    path = tmp_path / "usage.py"
    path.write_text(source)
    env = dict(os.environ)
    package_parent = Path(sqdiff.__file__).resolve().parents[1]
    site_dirs = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    if package_parent not in site_dirs:
        # A CMake build tree on PYTHONPATH: mypy ignores PYTHONPATH, so point MYPYPATH at it.
        env["MYPYPATH"] = str(package_parent)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(path)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_package_ships_its_type_information():
    package = Path(sqdiff.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_sqdiff.pyi").is_file()


def test_mypy_accepts_typed_use(tmp_path):
    result = run_mypy(tmp_path, GOOD)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout


def test_mypy_rejects_misuse(tmp_path):
    result = run_mypy(tmp_path, BAD)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if ": error:" in line]
    # One error on each misuse line (6-11), none elsewhere.
    assert sorted({int(line.split(":")[1]) for line in lines}) == [6, 7, 8, 9, 10, 11], result.stdout
