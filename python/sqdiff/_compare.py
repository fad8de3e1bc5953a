"""sqdiff.compare: the report of ``sqdiff compare --json`` on arrays in memory.

The compiled module computes it with the program's own core (one library, so
the two agree by construction) and returns the JSON tree as dicts and lists;
CompareReport gives its keys as attributes.
"""

from __future__ import annotations

import copy as _copy
import typing as _typing
from collections.abc import Mapping as _Mapping

from . import _sqdiff

if _typing.TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Optional, Union

    from numpy.typing import ArrayLike


class CompareReport:
    """The report of :func:`sqdiff.compare`: the keys of ``sqdiff compare --json``.

    ``report.to_dict()`` is exactly what ``json.loads`` gives for the program's
    report on the same data, without the ``a``/``b`` file paths: every key always
    present, a NaN or infinite float written ``None`` and named in the holding
    object's ``"nonfinite"`` dict (``{"mse": "nan"}``), as docs/cli.md's schema
    says. Attributes give the same values with the floats restored: ``report.mse``
    is ``nan`` where ``to_dict()["mse"]`` is ``None``; nested objects with floats
    (``report.finite``, ``report.tolerance``) are CompareReports too, and
    ``report.tensors`` (a set's report) is a list of them.

    >>> import numpy as np, sqdiff
    >>> report = sqdiff.compare(np.array([1.0, np.nan]), np.array([1.5, 0.0]))
    >>> report.mse, report.to_dict()["mse"], report.to_dict()["nonfinite"]["mse"]
    (nan, None, 'nan')
    >>> report.finite.mse, report.first_nan
    (0.25, {'a': [1], 'b': None})
    """

    __slots__ = ("_fields",)

    def __init__(self, fields: Dict[str, Any]) -> None:
        self._fields = fields

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``json.loads`` reads the program's ``--json`` output (a deep copy)."""
        return _copy.deepcopy(self._fields)

    @property
    def passed(self) -> bool:
        """Whether every gate asked for holds (no gate asked for: True); for a set, also no name missing or extra."""
        return bool(self._fields["passed"])

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if name not in fields or name == "nonfinite":
            raise AttributeError("CompareReport has no field %r" % name)
        nonfinite = fields.get("nonfinite", {})
        if name in nonfinite:
            return float(nonfinite[name])
        value = fields[name]
        if isinstance(value, dict) and "nonfinite" in value:
            return CompareReport(value)
        if name == "tensors":
            return [CompareReport(entry) for entry in value]
        return _copy.deepcopy(value)

    def __dir__(self) -> list:
        return sorted(set(object.__dir__(self)) | (set(self._fields) - {"nonfinite"}))

    def __repr__(self) -> str:
        if "tensors" in self._fields:
            return "CompareReport(passed=%r, compared=%r, failed=%r, missing=%r, extra=%r)" % (
                self.passed, self._fields["compared"], self._fields["failed"],
                [m["name"] for m in self._fields["missing"]], [e["name"] for e in self._fields["extra"]])
        return "CompareReport(passed=%r, shape=%r, mse=%r, max_abs_diff=%r, differing=%r)" % (
            self.passed, tuple(self._fields["shape"]), self.mse, self.max_abs_diff, self._fields["differing"])


def compare(a: Union[ArrayLike, Mapping[str, ArrayLike]], b: Union[ArrayLike, Mapping[str, ArrayLike]], *,
            atol: Optional[float] = None, rtol: Optional[float] = None, equal_nan: bool = False,
            broadcast: bool = False, peak: Optional[float] = None, fail_above: Optional[float] = None,
            threads: Optional[int] = None) -> CompareReport:
    """How far apart two arrays (or two dicts of arrays, by name) are: ``sqdiff compare``'s report.

    Parameters
    ----------
    a, b : array_like, or dicts of str -> array_like
        The reference and the array to check, of one dtype (no promotion: a
        mixed pair is an Error); ``ml_dtypes.bfloat16`` arrays are bf16, as
        ``sqdiff compare --dtype bf16`` reads bfloat16 files. Byte-swapped or
        unaligned arrays are read through a native copy. Dicts are compared
        tensor by tensor by name; names in only one of them are reported as
        ``missing`` (in a, not in b) or ``extra`` and fail the report.
    atol, rtol : float, optional
        The tolerance gate, NumPy's ``allclose`` rule per pair:
        ``|a - b| <= atol + rtol * |b|`` (non-finite pairs must be equal). Given
        either, the other defaults to ``np.allclose``'s (atol 1e-8, rtol 1e-5);
        given neither, there is no tolerance gate.
    equal_nan : bool
        Two NaNs at one position pass the gate (needs atol or rtol).
    broadcast : bool
        Shapes must match unless True (NumPy's broadcasting); the report's
        ``broadcasted`` says whether it did.
    peak : float, optional
        PSNR's peak (integer types default to their range).
    fail_above : float, optional
        The MSE gate: fails when the MSE is above it or NaN.
    threads : int, optional
        Worker threads (default: the library's, one per core unless
        ``SQDIFF_NUM_THREADS`` says otherwise).

    Returns
    -------
    CompareReport
        ``.passed``, ``.to_dict()`` (the program's JSON keys) and the keys as
        attributes: ``mse``, ``max_abs_diff``, ``max_abs_diff_index``,
        ``nan``, ``first_nan``, ``finite``, ``tolerance`` (``out_of_tolerance``,
        ``worst_index``, ``worst_abs_error``, ``worst_rel_error``) ...

    Examples
    --------
    >>> import numpy as np, sqdiff
    >>> report = sqdiff.compare(np.array([1.0, 2.0]), np.array([1.0, 2.5]), atol=0.1)
    >>> report.passed, report.tolerance.out_of_tolerance, report.tolerance.worst_index
    (False, 1, [1])
    """
    args = (atol, rtol, bool(equal_nan), bool(broadcast), peak, fail_above, threads)
    if isinstance(a, _Mapping) or isinstance(b, _Mapping):
        if not (isinstance(a, _Mapping) and isinstance(b, _Mapping)):
            raise TypeError("compare: a and b must both be dicts of arrays (sets of tensors) or both arrays")
        return CompareReport(_sqdiff._compare_sets(dict(a), dict(b), *args))
    return CompareReport(_sqdiff._compare(a, b, *args))



# Public as sqdiff.compare and sqdiff.CompareReport (doctest and help() look them up there).
compare.__module__ = "sqdiff"
CompareReport.__module__ = "sqdiff"
