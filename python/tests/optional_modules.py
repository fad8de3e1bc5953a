"""The tests' optional dependencies: each test module that needs one asks for it with require(),
which skips the module with a reason when it is not installed or older than the version sqdiff
supports, so that nothing is half-run.

SQDIFF_TEST_WITHOUT (comma-separated top-level names, e.g. "dask,distributed,zarr") hides
installed modules as if they were not installed: scripts/test.sh runs the Debian-Python suite
once with Debian's Dask packages and once without them, on one machine.
"""

import importlib.abc
import os
import sys

import pytest

# The oldest version of each that sqdiff supports (docs/python.md says the same). Dask 2022.12.1
# and distributed 2022.12.1 and zarr 2.13: Debian 12's python3-dask, -distributed and -zarr.
SUPPORTED = {
    "dask": "2022.12.1",
    "distributed": "2022.12.1",
    "zarr": "2.13",
    "ml_dtypes": "0.2",
    "torch": "1.13.0a0",  # Debian 12's python3-torch 1.13.1 calls itself 1.13.0a0
}

WHERE = {
    "dask": "requirements/test.txt, or Debian's python3-dask",
    "distributed": "requirements/test.txt, or Debian's python3-distributed",
    "zarr": "requirements/test.txt, or Debian's python3-zarr",
    "ml_dtypes": "requirements/test.txt; Debian has no package",
    "torch": "Debian's python3-torch, scripts/install-deps.sh --tests",
}


def hidden():
    return {name for name in os.environ.get("SQDIFF_TEST_WITHOUT", "").split(",") if name}


class _HiddenModules(importlib.abc.MetaPathFinder):
    """Refuses to find the hidden top-level modules and everything under them."""

    def __init__(self, names):
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by SQDIFF_TEST_WITHOUT)",
                                      name=fullname)
        return None


def hide_modules():
    """Called by conftest.py before any test module is imported."""
    names = hidden()
    if names:
        imported = sorted(name for name in sys.modules if name.split(".")[0] in names)
        if imported:
            raise RuntimeError(f"SQDIFF_TEST_WITHOUT: {', '.join(imported)} already imported")
        sys.meta_path.insert(0, _HiddenModules(names))


def require(name):
    """The module `name` (a dotted name imports its top-level package too), or a skip of the
    calling test module (or test) saying why."""
    top = name.split(".")[0]
    reason = f"{top} is not installed ({WHERE[top]})"
    if top in hidden():
        reason = f"{top} is hidden by SQDIFF_TEST_WITHOUT"
    pytest.importorskip(top, minversion=SUPPORTED[top], reason=reason)
    return pytest.importorskip(name, reason=reason)
