"""Shared set-up: the hypothesis profiles, and which sqdiff is under test."""

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

import optional_modules

optional_modules.hide_modules()

# "ci" (the default): derandomized, so every run draws the same examples, no
# example database on disk, and bounded example counts (each test may lower
# them further) so that the suite stays well under two minutes even in the
# ASan build. "thorough": random seeds and 20x the examples, for hunting bugs
# by hand: SQDIFF_HYPOTHESIS_PROFILE=thorough python3 -m pytest python/tests
_COMMON = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("ci", derandomize=True, max_examples=100, print_blob=False, **_COMMON)
settings.register_profile("thorough", max_examples=2000, **_COMMON)
settings.load_profile(os.environ.get("SQDIFF_HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionfinish(session, exitstatus):
    """SQDIFF_TEST_IMPORTS_LOG (set by CTest): the file of every module imported, one per line,
    which scripts/build_packages.py maps to the Debian packages the suite needed."""
    log = os.environ.get("SQDIFF_TEST_IMPORTS_LOG")
    if log:
        files = sorted({os.path.abspath(module.__file__) for module in list(sys.modules.values())
                        if isinstance(getattr(module, "__file__", None), str)})
        Path(log).write_text("".join(path + "\n" for path in files), encoding="utf-8", errors="surrogateescape")


def pytest_report_header(config):
    import numpy
    import sqdiff

    return [
        f"sqdiff {sqdiff.__version__} from {Path(sqdiff.__file__).parent}, SIMD target "
        f"{sqdiff.simd_target()}; numpy {numpy.__version__}; hypothesis profile "
        f"{settings._current_profile}",
    ]
