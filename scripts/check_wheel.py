#!/usr/bin/python3
"""Checks that a wheel of sqdiff is the complete, self-contained product (issue 24): installed
into a fresh venv, `import sqdiff` computes, and the `sqdiff` program the wheel installs in the
venv's bin/ runs, on a loader that cannot see the shared libraries a plain build links against
(Highway's libhwy.so.1 from Debian's libhwy1, pugixml's libpugixml.so.1). `auditwheel repair`
must have copied those into the wheel; a wheel that still needs the system's copies fails here.

    scripts/check_wheel.py WHEEL VENV

VENV is deleted and created again. The libraries are hidden in a private mount namespace
(`unshare --mount`; `--user --map-root-user` too when not run as root): an empty file is
bind-mounted over each, so that loading it fails as on a machine without the package. The check
first makes sure that the hiding works (the libraries no longer load), then runs the wheel.
It also checks the wheel's metadata: the extras `bf16`, `dask`, `litert` and `openvino`. scripts/test.sh runs it in its
"python venv" stage on the wheel it built and repaired. Exits non-zero, naming what failed.
"""

import ctypes
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The libraries the extension and the program load that are not part of the manylinux base
# (glibc, libstdc++, libgcc_s), by their DT_NEEDED names. Whatever else auditwheel bundled is
# hidden too (bundled_libraries()), so that a new dependency is checked as well.
HIDDEN_LIBRARIES = ("libhwy.so.1", "libpugixml.so.1")

# The extras pyproject.toml declares, and what each must pull in.
EXTRAS = {"bf16": "ml_dtypes", "dask": "dask[array]", "litert": "ai-edge-litert", "openvino": "openvino"}

# Run by the venv's Python inside the namespace, from /, so that neither the source tree nor
# Debian's /usr/local copy of the module can stand in for the installed wheel.
USE_THE_WHEEL = r"""
import os, subprocess, sys, tempfile
import numpy as np, ml_dtypes, sqdiff

venv = sys.argv[1]
assert os.path.realpath(sqdiff.__file__).startswith(os.path.realpath(venv) + os.sep), sqdiff.__file__
got = sqdiff.squared_difference(np.float32([3, 0.5]), np.float32([1, 0]))
assert got.dtype == np.float32 and got.tolist() == [4.0, 0.25], got
bf = sqdiff.subtract(np.array([1.5], dtype=ml_dtypes.bfloat16), np.array([0.25], dtype=ml_dtypes.bfloat16))
assert bf.dtype == ml_dtypes.bfloat16 and float(bf[0]) == 1.25, bf

program = os.path.join(venv, "bin", "sqdiff")
version = subprocess.run([program, "--version"], check=True, capture_output=True, text=True).stdout
expected = "sqdiff %s (SIMD target: %s)\n" % (sqdiff.__version__, sqdiff.simd_target())
assert version == expected, (version, expected)
with tempfile.TemporaryDirectory() as work:
    np.save(os.path.join(work, "a.npy"), np.float32([[1, 2, 3]]))
    np.save(os.path.join(work, "b.npy"), np.float32([[1], [-1]]))
    subprocess.run([program, "run", "--op", "squared_difference", "a.npy", "b.npy", "-o", "out.npy"],
                   check=True, cwd=work)
    out = np.load(os.path.join(work, "out.npy"))
    assert out.tolist() == [[0, 1, 4], [4, 9, 16]], out
print("wheel ok: import sqdiff %s from %s, %s" % (sqdiff.__version__, os.path.dirname(sqdiff.__file__),
                                                 version.strip()))
"""


class CheckFailed(Exception):
    pass


def pinned_version(name):
    """The version requirements/test.txt pins for `name`, so that the fresh venv installs what
    the test venv has (from pip's cache) rather than whatever is newest."""
    with open(os.path.join(REPO_ROOT, "requirements", "test.txt")) as f:
        for line in f:
            match = re.fullmatch(r"%s==(\S+)" % re.escape(name), line.strip())
            if match:
                return match.group(1)
    raise CheckFailed("requirements/test.txt pins no %s" % name)


def check_metadata(wheel):
    """The wheel carries the program and declares the extras with their requirements."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_names = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(metadata_names) != 1:
            raise CheckFailed("%s: expected one .dist-info/METADATA, found %s" % (wheel, metadata_names))
        metadata = archive.read(metadata_names[0]).decode()
    if not any(re.fullmatch(r"[^/]+\.data/scripts/sqdiff", n) for n in names):
        raise CheckFailed("%s holds no sqdiff program in its .data/scripts/" % wheel)
    extras = re.findall(r"^Provides-Extra: (\S+)$", metadata, re.M)
    requires = re.findall(r"^Requires-Dist: (.+)$", metadata, re.M)
    for extra, package in EXTRAS.items():
        if extra not in extras:
            raise CheckFailed("%s: no extra %r (Provides-Extra: %s)" % (wheel, extra, extras))
        marker = r"extra\s*==\s*['\"]%s['\"]" % extra
        if not any(r.startswith(package) and re.search(marker, r) for r in requires):
            raise CheckFailed("%s: extra %r does not require %s (Requires-Dist: %s)"
                              % (wheel, extra, package, requires))


def create_venv(wheel, venv):
    subprocess.run(["rm", "-rf", venv], check=True)
    subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
    requirements = ["%s[bf16]" % os.path.abspath(wheel), "numpy==" + pinned_version("numpy"),
                    "ml_dtypes==" + pinned_version("ml_dtypes")]
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", *requirements], check=True)


def loader_cache():
    """{name: set of files} of the loader's cache (`ldconfig -p`), resolved past symbolic links."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"  # /sbin may be off a user's PATH
    listing = subprocess.run([ldconfig, "-p"], check=True, capture_output=True, text=True).stdout
    cache = {}
    for line in listing.splitlines():
        match = re.fullmatch(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if match:
            cache.setdefault(match.group(1), set()).add(os.path.realpath(match.group(3)))
    return cache


def bundled_libraries(venv):
    """The system libraries auditwheel copied into the installed wheel's sqdiff.libs/, by the
    stem of their names: libfoo-0123abcd.so.1.2 (the copy, renamed with a hash) gives libfoo."""
    stems = set()
    for libs in glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "sqdiff.libs")):
        for name in os.listdir(libs):
            match = re.fullmatch(r"(.+)-[0-9a-f]{8}\.so(\..*)?", name)
            if match:
                stems.add(match.group(1))
    return stems


def hidden_names(venv):
    """HIDDEN_LIBRARIES and every name in the loader's cache of a library the wheel bundled."""
    names = set(HIDDEN_LIBRARIES)
    cached = loader_cache()
    for stem in bundled_libraries(venv):
        names.update(name for name in cached if name.startswith(stem + ".so"))
    return sorted(names)


def run_hidden(venv):
    """Runs this script again inside a private mount namespace, where it hides the libraries and
    uses the installed wheel (inside())."""
    unshare = ["unshare", "--mount", "--propagation", "private"]
    if os.geteuid() != 0:
        unshare[1:1] = ["--user", "--map-root-user"]
    result = subprocess.run([*unshare, sys.executable, os.path.abspath(__file__), "--inside", venv])
    if result.returncode != 0:
        raise CheckFailed("the wheel did not work with %s hidden from the loader (exit status %d, above)"
                          % (", ".join(hidden_names(venv)), result.returncode))


def inside(venv):
    """In the namespace: hide each library, make sure it no longer loads, then use the wheel."""
    cache = loader_cache()
    names = hidden_names(venv)
    paths = sorted(set().union(*(cache.get(name, set()) for name in names)))  # each file once
    with tempfile.NamedTemporaryFile(prefix="hidden-library-") as empty:
        for path in paths:
            subprocess.run(["mount", "--bind", empty.name, path], check=True)
        for name in names:
            try:
                ctypes.CDLL(name)
            except OSError as e:
                print("hidden from the loader: %s (%s)" % (name, e))
            else:
                print("check_wheel: %s still loads: the check would prove nothing" % name, file=sys.stderr)
                return 1
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LD_"))}
        env["PYTHONNOUSERSITE"] = "1"
        python = os.path.join(venv, "bin", "python")
        return subprocess.run([python, "-c", USE_THE_WHEEL, os.path.abspath(venv)], cwd="/", env=env).returncode


def main(argv):
    if len(argv) == 3 and argv[1] == "--inside":
        return inside(argv[2])
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    wheel, venv = argv[1], argv[2]
    try:
        check_metadata(wheel)
        create_venv(wheel, venv)
        run_hidden(venv)
    except (CheckFailed, subprocess.CalledProcessError) as e:
        print("check_wheel: FAILED: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
