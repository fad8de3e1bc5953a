"""The package as built: the extension carries the library inside it (no
libsqdiff.so to find at run time), and a build without Highway stops with one
sentence that says what to install."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sqdiff
from support import source_dir


def extension_path():
    return Path(sqdiff._sqdiff.__file__)


def test_extension_links_the_library_statically():
    result = subprocess.run(["readelf", "-d", str(extension_path())], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", result.stdout)
    assert needed, result.stdout
    assert not [name for name in needed if "sqdiff" in name], needed
    # Debian ships Highway only as a shared library (libhwy1): the CMake build and a wheel straight
    # from pip load Debian's libhwy.so.1; a wheel repaired by auditwheel (scripts/test.sh, README.md)
    # loads its own copy, renamed libhwy-<hash>.so.1.x.y, from sqdiff.libs/ beside the package.
    highway = [name for name in needed if re.fullmatch(r"libhwy(-[0-9a-f]{8})?\.so\.1(\.\d+)*", name)]
    assert len(highway) == 1, needed
    if highway[0] != "libhwy.so.1":
        assert (extension_path().parent.parent / "sqdiff.libs" / highway[0]).is_file(), highway


def test_a_build_without_highway_says_what_to_install(tmp_path):
    cmake = shutil.which("cmake")
    assert cmake, "cmake is installed with the build dependencies (scripts/install-deps.sh)"
    result = subprocess.run(
        [cmake, "-S", str(source_dir()), "-B", str(tmp_path / "build"), "-DCMAKE_DISABLE_FIND_PACKAGE_hwy=ON",
         "-DSQDIFF_BUILD_PYTHON=OFF", "-DSQDIFF_BUILD_TESTS=OFF", "-DSQDIFF_BUILD_TOOLS=OFF",
         "-DSQDIFF_BUILD_EXAMPLES=OFF"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    message = " ".join(result.stderr.split())  # CMake wraps its messages
    assert "sqdiff needs Highway: install Debian's libhwy-dev (apt install libhwy-dev)." in message, result.stderr
    assert len(re.findall(r"CMake Error", result.stderr)) == 1, result.stderr


@pytest.mark.parametrize("name", ["py.typed", "_sqdiff.pyi", "__init__.py"])
def test_package_files_sit_beside_the_extension(name):
    assert (extension_path().parent / name).is_file()


def test_the_extras_install_what_the_optional_modules_need():
    """`pip install "sqdiff[dask]"` brings Dask's arrays for sqdiff.dask, and "[bf16]" ml_dtypes;
    with no version floor for Dask (docs/python.md names the versions tested)."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11 reads TOML")
    project = tomllib.loads((source_dir() / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["dask"] == ["dask[array]>=2022.12.1"]
    assert project["optional-dependencies"]["bf16"] == ["ml_dtypes>=0.2"]


def test_the_installed_metadata_offers_the_extras():
    """The wheel's metadata, where the package under test was installed by pip."""
    import importlib.metadata

    try:
        distribution = importlib.metadata.distribution("sqdiff")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("sqdiff is not installed by pip here (the CMake build tree's package)")
    if Path(distribution.locate_file("sqdiff/__init__.py")).resolve() != Path(sqdiff.__file__).resolve():
        pytest.skip("the sqdiff under test is not the one pip installed")
    assert {"bf16", "dask"} <= set(distribution.metadata.get_all("Provides-Extra"))
    assert 'dask[array]>=2022.12.1; extra == "dask"' in distribution.metadata.get_all("Requires-Dist")


@pytest.mark.parametrize("raised, expected", [
    # the loader's refusal: a library the extension needs is not there
    ("ImportError('libhwy.so.1: cannot open shared object file: No such file or directory')",
     ["could not be loaded", "libhwy.so.1: cannot open shared object file", "auditwheel repair"]),
    # no extension at all: a source checkout that was never built
    ("ModuleNotFoundError(\"No module named 'sqdiff._sqdiff'\")",
     ["is missing: build the project with CMake"]),
])
def test_an_extension_that_does_not_load_says_why(tmp_path, raised, expected):
    """A copy of the package whose compiled part raises as the loader would: the
    ImportError names the loader's reason (a wheel needing libhwy.so.1), not only
    "missing"."""
    package = tmp_path / "sqdiff"
    package.mkdir()
    for source in Path(sqdiff.__file__).parent.glob("*.py"):
        shutil.copy(source, package / source.name)
    (package / "_sqdiff.py").write_text(f"raise {raised}\n")
    result = subprocess.run([sys.executable, "-c", "import sqdiff"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    for text in expected:
        assert text in last, result.stderr
