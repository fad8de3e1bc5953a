"""sqdiff.simd_target and sqdiff.compiled_simd_targets: the SIMD instruction sets
the kernels were compiled for, and the one this CPU runs them with.
"""

from __future__ import annotations

import typing as _typing

from . import _sqdiff

if _typing.TYPE_CHECKING:
    from typing import List


def simd_target() -> str:
    """The SIMD instruction set sqdiff's kernels use on this CPU, e.g. "AVX2".

    Chosen at run time as the best of ``compiled_simd_targets()`` that the CPU
    supports. Results do not depend on it (except for the payload bits of a
    NaN result).

    >>> import sqdiff
    >>> sqdiff.simd_target() in sqdiff.compiled_simd_targets()
    True
    """
    return _sqdiff.simd_target()


def compiled_simd_targets() -> List[str]:
    """The SIMD instruction sets compiled into sqdiff, best first, as a list of names.

    >>> import sqdiff
    >>> sqdiff.compiled_simd_targets()[-1]
    'SCALAR'
    """
    return _sqdiff.compiled_simd_targets()


# help() and doctest.testmod(sqdiff) take them for the package's own.
simd_target.__module__ = "sqdiff"
compiled_simd_targets.__module__ = "sqdiff"
