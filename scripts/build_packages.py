#!/usr/bin/python3
"""Checks that scripts/install-deps.sh --tests installs every Debian package a build used.

A build on a machine that holds more than install-deps installs can pick up a package by chance
(Debian's oneDNN CMake config needs OpenCL, which libdnnl-dev only recommends): CI on that machine
passes, a fresh machine fails. This check finds every system file the build read and the package
that owns it, and fails when that package is neither one install-deps names (in either of its
sets: the main job's, which scripts/setup.sh installs, and the tests', which scripts/test.sh adds
and whose builds read both) nor in what those packages pull in through Depends and Pre-Depends
(apt installs no Recommends here), nor part of every Debian system (Essential or Priority:
required).

The files a build read, from a Ninja build directory:
- every CMake file the configure step read (the inputs of build.ninja's RERUN_CMAKE rule);
- every file CMake's find_library/find_program/find_file stored in CMakeCache.txt (FILEPATH),
  except the tools CMake looks for on its own (CMAKE_LINKER, CMAKE_OBJDUMP, ...: it takes lld or
  llvm-objdump when they are there, and ld or objdump when not) unless the build runs them;
- every header a compile included (`ninja -t deps`);
- every Python module the build's Python suite imported (<build>/python_imports.txt, which
  python/tests/conftest.py writes when CTest runs it), so the Debian packages the tests need count
  too (a pure-Python package of Debian's can also be pulled in only by a Recommends).

Usage: scripts/build_packages.py BUILD_DIR...   (exit 0: all covered; 1: a package is missing;
2: a build directory cannot be read). Reads the package database in /var/lib/dpkg.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INSTALL_DEPS = os.path.join(REPO_ROOT, "scripts", "install-deps.sh")


# --- the package database ------------------------------------------------------------------------

@dataclass
class Package:
    name: str
    # Each entry is one dependency: its alternatives ("a | b") as bare names.
    depends: list[list[str]] = field(default_factory=list)
    provides: list[str] = field(default_factory=list)
    base: bool = False  # Essential or Priority: required: on every Debian system


def _names(relation: str) -> list[list[str]]:
    """'a (>= 1), b:any | c' -> [['a'], ['b', 'c']]: versions and architecture qualifiers dropped."""
    groups = []
    for group in relation.split(","):
        alternatives = [re.split(r"[\s(:\[]", alternative.strip(), maxsplit=1)[0]
                        for alternative in group.split("|")]
        alternatives = [name for name in alternatives if name]
        if alternatives:
            groups.append(alternatives)
    return groups


def read_installed(dpkg_dir: str) -> dict[str, Package]:
    """The installed packages of the database in dpkg_dir (its `status` file)."""
    installed = {}
    with open(os.path.join(dpkg_dir, "status"), encoding="utf-8", errors="replace") as status:
        for stanza in status.read().split("\n\n"):
            fields, key = {}, None
            for line in stanza.splitlines():
                if line[:1] in (" ", "\t") and key:
                    fields[key] += " " + line.strip()
                elif ":" in line:
                    key, value = line.split(":", 1)
                    fields[key] = value.strip()
            if not fields.get("Package") or not fields.get("Status", "").endswith(" installed"):
                continue
            package = Package(fields["Package"])
            for relation in ("Pre-Depends", "Depends"):
                package.depends += _names(fields.get(relation, ""))
            package.provides = [group[0] for group in _names(fields.get("Provides", ""))]
            package.base = fields.get("Essential") == "yes" or fields.get("Priority") == "required"
            installed[package.name] = package
    return installed


def file_owners(dpkg_dir: str) -> dict[str, str]:
    """Every path a package installed, to its package (from info/*.list; 'libc6:amd64' -> 'libc6')."""
    owners = {}
    info = os.path.join(dpkg_dir, "info")
    for entry in sorted(os.listdir(info)):
        if entry.endswith(".list"):
            package = entry[:-len(".list")].split(":", 1)[0]
            with open(os.path.join(info, entry), encoding="utf-8", errors="surrogateescape") as paths:
                for path in paths.read().splitlines():
                    owners.setdefault(path, package)
    return owners


def closure(roots: list[str], installed: dict[str, Package]) -> set[str]:
    """The roots, the base system and everything they depend on, as apt resolves it here: of a
    dependency's alternatives, the first one installed (a virtual name: the installed package
    providing it)."""
    providers: dict[str, list[str]] = {}
    for package in installed.values():
        for virtual in package.provides:
            providers.setdefault(virtual, []).append(package.name)

    def resolve(name: str) -> str | None:
        if name in installed:
            return name
        return next(iter(sorted(providers.get(name, []))), None)

    reached: set[str] = set()
    pending = list(roots) + [package.name for package in installed.values() if package.base]
    while pending:
        name = pending.pop()
        if name in reached or name not in installed:
            continue
        reached.add(name)
        for alternatives in installed[name].depends:
            chosen = next((found for found in map(resolve, alternatives) if found), None)
            if chosen:
                pending.append(chosen)
    return reached


# --- what a build read ---------------------------------------------------------------------------

class BuildDirError(Exception):
    pass


def cmake_inputs(build_dir: str) -> list[str]:
    """The files the configure step read: build.ninja's rule that reruns CMake depends on them."""
    path = os.path.join(build_dir, "build.ninja")
    if not os.path.isfile(path):
        raise BuildDirError("%s: no build.ninja (a configured Ninja build directory is needed)" % build_dir)
    with open(path, encoding="utf-8") as ninja:
        text = ninja.read().replace("$\n", " ")
    match = re.search(r"^build build\.ninja\s*:\s*RERUN_CMAKE\b(.*)$", text, re.MULTILINE)
    if not match:
        raise BuildDirError("%s: build.ninja has no RERUN_CMAKE rule" % path)
    return [token for token in match.group(1).split() if token.startswith("/")]


def cached_files(build_dir: str) -> list[str]:
    """The files CMake's find_* commands found (FILEPATH entries of CMakeCache.txt); of CMake's
    own CMAKE_* tools, those the build's commands name."""
    with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8", errors="replace") as cache:
        entries = re.findall(r"^([^#/\n][^:\n]*):FILEPATH=(/.+)$", cache.read(), re.MULTILINE)
    commands = ""
    for name in ("build.ninja", os.path.join("CMakeFiles", "rules.ninja")):
        if os.path.isfile(os.path.join(build_dir, name)):
            with open(os.path.join(build_dir, name), encoding="utf-8", errors="replace") as ninja:
                commands += ninja.read()
    return [path for key, path in entries if not key.startswith("CMAKE_") or path in commands]


def included_headers(build_dir: str) -> list[str]:
    """Every header a compile of this build included (ninja's deps log; empty before a build)."""
    deps = subprocess.run(["ninja", "-C", build_dir, "-t", "deps"], check=True, text=True,
                          capture_output=True).stdout
    return [line.strip() for line in deps.splitlines() if line.startswith("    /")]


STARTUP_IMPORTS = "import sys; print('\\n'.join(m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)))"


def python_imports(build_dir: str) -> list[str]:
    """The files of the modules the Python suite imported (none when it did not run), less those
    the interpreter imports when it starts: the .pth files of whatever is installed import
    those (setuptools' _distutils_hack), which the tests do not need."""
    path = os.path.join(build_dir, "python_imports.txt")
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", errors="surrogateescape") as imports:
        files = [line for line in imports.read().splitlines() if line.startswith("/")]
    startup = subprocess.run(["/usr/bin/python3", "-c", STARTUP_IMPORTS], check=True, text=True,
                             capture_output=True).stdout.split("\n")
    return sorted(set(files) - {os.path.abspath(file) for file in startup if file})


def files_read(build_dir: str) -> set[str]:
    return (set(cmake_inputs(build_dir)) | set(cached_files(build_dir)) | set(included_headers(build_dir)) |
            set(python_imports(build_dir)))


# --- the check -----------------------------------------------------------------------------------

def owner_of(path: str, owners: dict[str, str]) -> str | None:
    """The package that installed path, through symlinks (/usr/bin/c++ -> g++) and Debian 12's
    merged /usr (dpkg may list /lib/x for what is read as /usr/lib/x)."""
    candidates = [path, os.path.realpath(path)]
    for candidate in list(candidates):
        for merged in ("/bin/", "/sbin/", "/lib/", "/lib64/"):
            if candidate.startswith("/usr" + merged):
                candidates.append(candidate[len("/usr"):])
            elif candidate.startswith(merged):
                candidates.append("/usr" + candidate)
    return next((owners[candidate] for candidate in candidates if candidate in owners), None)


def uncovered(paths: set[str], covered: set[str], owners: dict[str, str],
              own_trees: list[str]) -> dict[str, list[str]]:
    """Packages outside `covered` that own one of paths, each with the paths it owns; files that
    no package owns (outside the project's own trees) under the key None."""
    found: dict[str, list[str]] = {}
    for path in sorted(paths):
        if any(os.path.realpath(path).startswith(tree + os.sep) for tree in own_trees):
            continue
        if not os.path.exists(path):
            continue  # read by an earlier configure and gone since; nothing to install
        package = owner_of(path, owners)
        if package is None or package not in covered:
            found.setdefault(package, []).append(path)
    return found


def install_deps_packages() -> list[str]:
    """Both of install-deps' sets, the main job's and the tests': scripts/test.sh installs both and
    its builds read both (the main set alone is what scripts/setup.sh installs)."""
    return subprocess.run(["bash", INSTALL_DEPS, "--list", "--tests"], check=True, text=True,
                          capture_output=True).stdout.split()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dirs", nargs="+", metavar="BUILD_DIR")
    parser.add_argument("--dpkg-dir", default="/var/lib/dpkg", help="the package database (for tests)")
    parser.add_argument("--packages", help="the packages install-deps installs, space-separated "
                        "(default: scripts/install-deps.sh --list --tests)")
    args = parser.parse_args(argv)

    roots = args.packages.split() if args.packages is not None else install_deps_packages()
    installed = read_installed(args.dpkg_dir)
    covered = closure(roots, installed)
    owners = file_owners(args.dpkg_dir)
    own_trees = [os.path.realpath(REPO_ROOT)] + [os.path.realpath(d) for d in args.build_dirs]

    status = 0
    for build_dir in args.build_dirs:
        try:
            paths = files_read(build_dir)
        except (BuildDirError, OSError, subprocess.CalledProcessError) as error:
            print("build_packages: %s" % error, file=sys.stderr)
            status = max(status, 2)
            continue
        missing = uncovered(paths, covered, owners, own_trees)
        for package, examples in sorted(missing.items(), key=lambda item: item[0] or ""):
            shown = ", ".join(examples[:3]) + (" and %d more" % (len(examples) - 3) if len(examples) > 3 else "")
            if package is None:
                print("build_packages: %s read files no Debian package installed: %s" % (build_dir, shown),
                      file=sys.stderr)
            else:
                print("build_packages: %s needs Debian's %s, which scripts/install-deps.sh --tests does not "
                      "install (nor anything it installs depend on): %s" % (build_dir, package, shown),
                      file=sys.stderr)
            status = max(status, 1)
        if not missing:
            print("build_packages: %s: %d system files read, every one from a package install-deps installs"
                  % (build_dir, len(paths)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
