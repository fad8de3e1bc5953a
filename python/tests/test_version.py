"""One version number, in one place: include/sqdiff/version.hpp.

The module's ``__version__``, the build system's version (the wheel's metadata
when sqdiff was installed by pip, CMake's project(VERSION) when it comes from a
CMake build tree) and ``sqdiff --version`` all say what that file says.
"""

import importlib.metadata
import os
import re
import subprocess
from pathlib import Path

import pytest

import sqdiff
from support import source_dir


def header_version():
    text = (source_dir() / "include" / "sqdiff" / "version.hpp").read_text()
    parts = [re.search(rf"^#define SQDIFF_VERSION_{part} (\d+)$", text, re.M) for part in ("MAJOR", "MINOR", "PATCH")]
    assert all(parts), "version.hpp lost one of its three #defines"
    return ".".join(match.group(1) for match in parts)


def cmake_build_tree():
    """The CMake build tree the package was imported from (<build>/python/sqdiff), or None."""
    build = Path(sqdiff.__file__).resolve().parents[2]
    return build if (build / "CMakeCache.txt").is_file() else None


def test_version_hpp_says_major_minor_patch():
    assert re.fullmatch(r"\d+\.\d+\.\d+", header_version())


def test_module_version_is_version_hpp():
    assert sqdiff.__version__ == header_version()


def test_build_system_version_is_version_hpp():
    tree = cmake_build_tree()
    if tree is None:
        # Installed by pip: the wheel's metadata (pyproject.toml's regex on version.hpp).
        assert importlib.metadata.version("sqdiff") == header_version()
    else:
        cache = (tree / "CMakeCache.txt").read_text()
        match = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.*)$", cache, re.M)
        assert match, f"no CMAKE_PROJECT_VERSION in {tree / 'CMakeCache.txt'}"
        assert match.group(1) == header_version()


def command_line_program():
    """The `sqdiff` program: SQDIFF_CLI, or the one in the build tree the package came from."""
    if os.environ.get("SQDIFF_CLI"):
        return Path(os.environ["SQDIFF_CLI"])
    tree = cmake_build_tree()
    if tree is not None and (tree / "tools" / "sqdiff").is_file():
        return tree / "tools" / "sqdiff"
    pytest.skip("no sqdiff program to ask: the wheel has none; set SQDIFF_CLI (scripts/test.sh does)")


def test_command_line_version_is_version_hpp():
    result = subprocess.run([str(command_line_program()), "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert re.match(r"sqdiff (\S+) \(SIMD target: ", result.stdout), result.stdout
    assert result.stdout.split()[1] == header_version()
