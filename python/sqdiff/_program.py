"""The `sqdiff` program of this package, for the parts of the Python API that run it
(sqdiff.verify on .tflite models runs `sqdiff tflite --tensors`).

Where it is looked for, first found wins:

1. ``$SQDIFF_CLI``, when set (the tests set it; so can a user with a program elsewhere);
2. a CMake build tree the package was imported from (``<build>/python/sqdiff``): ``<build>/tools/sqdiff``;
3. the program a wheel installed with this package (``<venv>/bin/sqdiff``, listed in the
   distribution's RECORD);
4. ``sqdiff`` on ``PATH``.

The program found must be this package's version (``sqdiff --version``), or the call is refused:
a program of another version computes with other rules.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from . import _sqdiff


def _candidates() -> list:
    found = []
    if os.environ.get("SQDIFF_CLI"):
        found.append(("$SQDIFF_CLI", Path(os.environ["SQDIFF_CLI"])))
    package = Path(__file__).resolve().parent
    tree = package.parents[1]
    if (tree / "CMakeCache.txt").is_file():
        found.append(("the build tree", tree / "tools" / "sqdiff"))
    try:
        import importlib.metadata as metadata

        for entry in metadata.files("sqdiff") or []:
            if entry.name == "sqdiff" and entry.parent.name in ("bin", "Scripts"):
                found.append(("the installed wheel", Path(entry.locate()).resolve()))
    except Exception:  # noqa: BLE001 - no distribution metadata (a build tree, a copied package)
        pass
    on_path = shutil.which("sqdiff")
    if on_path:
        found.append(("PATH", Path(on_path)))
    return found


@functools.lru_cache(maxsize=None)
def program() -> str:
    """The path of the `sqdiff` program to run; raises sqdiff.Error when there is none of this version."""
    tried = []
    for where, path in _candidates():
        if not (path.is_file() and os.access(path, os.X_OK)):
            tried.append("%s (%s): no such program" % (path, where))
            continue
        try:
            done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
        except OSError as error:
            tried.append("%s (%s): %s" % (path, where, error))
            continue
        words = done.stdout.split()
        if done.returncode != 0 or len(words) < 2 or words[0] != "sqdiff":
            tried.append("%s (%s): `--version` did not answer as sqdiff does" % (path, where))
            continue
        if words[1] != _sqdiff.__version__:
            tried.append("%s (%s): version %s, not this package's %s" % (path, where, words[1], _sqdiff.__version__))
            continue
        return str(path)
    raise _sqdiff.Error(
        "the sqdiff program %s is needed and was not found (%s): install sqdiff with pip (the wheel installs the "
        "program), or build it (`cmake --build BUILD --target sqdiff_cli`), or set SQDIFF_CLI to its path"
        % (_sqdiff.__version__, "; ".join(tried) if tried else "nowhere to look"))
