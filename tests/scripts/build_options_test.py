#!/usr/bin/python3
"""Tests of what scripts/setup.sh and scripts/test.sh configure in their shared build directory
(issue 24: a first command that builds only what the main job needs). One scratch build directory
is configured (not built) with setup.sh's options, then test.sh's, then setup.sh's again, as a
user running setup.sh, test.sh and setup.sh in one checkout does; each time the build's targets
and CTest's list of tests must be exactly that configuration's. And the Debian packages each
installs (issue 31: the first command installs only what the main job needs): setup.sh runs
scripts/install-deps.sh for the main job's set, test.sh for that and the tests' set, and the
configure with setup.sh's options reads nothing from a package outside the main job's set. Run by
CTest (tests/scripts_tests.cmake)."""

import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO_ROOT, "scripts"))
import build_packages  # noqa: E402

# What the main job runs or installs (scripts/setup.sh): the program, the Python module and the
# examples, by their paths in the build directory (the library, src/libsqdiff.a, is linked into
# each; other static libraries are the program's own parts).
MAIN_JOB_PROGRAMS = {"tools/sqdiff", "examples/seed_examples", "examples/readme_example", "examples/compare_in_a_test",
                     "python/sqdiff/_sqdiff"}


def configure_options(script, command):
    """The -D options of the one line of scripts/`script` (continuation lines joined) that holds
    `command`, the words that configure build/."""
    with open(os.path.join(REPO_ROOT, "scripts", script)) as f:
        text = f.read().replace("\\\n", " ")
    lines = [line for line in text.splitlines() if command in line]
    if len(lines) != 1:
        raise AssertionError("scripts/%s: expected one line with %r, found %d" % (script, command, len(lines)))
    return [word for word in shlex.split(lines[0]) if word.startswith("-D")]


def install_deps_arguments(script):
    """The arguments of the one command of scripts/`script` (comments aside) that runs
    scripts/install-deps.sh."""
    with open(os.path.join(REPO_ROOT, "scripts", script)) as f:
        lines = [line for line in f.read().replace("\\\n", " ").splitlines()
                 if "scripts/install-deps.sh" in line and not line.lstrip().startswith("#")]
    if len(lines) != 1:
        raise AssertionError("scripts/%s: expected one command running install-deps.sh, found %d"
                             % (script, len(lines)))
    lexer = shlex.shlex(lines[0], posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    arguments = []
    for word in words[words.index("scripts/install-deps.sh") + 1:]:
        if word in (";", "&&", "||", "|", ")"):
            break
        arguments.append(word)
    return arguments


def install_deps_list(*arguments):
    return subprocess.run(["bash", build_packages.INSTALL_DEPS, "--list", *arguments], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.split()


class InstallDepsCallsTest(unittest.TestCase):
    def test_setup_installs_the_main_set_and_test_both(self):
        self.assertEqual(install_deps_arguments("setup.sh"), [])
        self.assertEqual(install_deps_arguments("test.sh"), ["--tests"])


class BuildOptionsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="sqdiff-build-options-")
        cls.build = os.path.join(cls.tmp.name, "build")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def configure(self, options):
        result = subprocess.run(["cmake", "-S", REPO_ROOT, "-B", self.build, "-G", "Ninja", *options],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(result.returncode, 0, result.stdout)

    def linked_programs(self):
        """Every program and module `cmake --build` would link, by path (the Python module
        without its ABI suffix)."""
        listing = subprocess.run(["ninja", "-C", self.build, "-t", "targets", "all"], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
        outputs = set()
        for line in listing.splitlines():
            path, _, rule = line.partition(": ")
            if re.match(r"CXX_(EXECUTABLE|MODULE_LIBRARY)_LINKER", rule):
                outputs.add(re.sub(r"\.cpython-.*\.so$", "", path))
        return outputs

    def listed_tests(self):
        """CTest's list of tests, by name."""
        listing = subprocess.run(["ctest", "--test-dir", self.build, "-N"], check=True, stdout=subprocess.PIPE,
                                 text=True).stdout
        return re.findall(r"^\s*Test\s+#\d+: (\S+)", listing, re.M)

    def assert_setup_configuration(self):
        self.assertEqual(self.linked_programs(), MAIN_JOB_PROGRAMS)
        self.assertEqual(self.listed_tests(), [])

    def assert_reads_only_main_packages(self):
        """The files this configure read (CMake files, what find_* cached) come from the packages
        of install-deps' main set and what they depend on, never from one that only the tests'
        set installs: a find_package that only the tests use runs only when they are on. (Files no
        Debian package owns, a CMake of one's own for instance, are build_packages.py's concern.)"""
        paths = set(build_packages.cmake_inputs(self.build)) | set(build_packages.cached_files(self.build))
        installed = build_packages.read_installed("/var/lib/dpkg")
        covered = build_packages.closure(install_deps_list(), installed)
        missing = build_packages.uncovered(paths, covered, build_packages.file_owners("/var/lib/dpkg"),
                                           [os.path.realpath(REPO_ROOT), os.path.realpath(self.build)])
        missing.pop(None, None)
        self.assertEqual(missing, {}, "setup.sh's configure read files of packages that "
                         "`scripts/install-deps.sh` (without --tests) does not install")

    def test_setup_then_test_then_setup(self):
        setup_options = configure_options("setup.sh", "cmake -S . -B build ")
        test_options = configure_options("test.sh", "build_and_test release build ")
        self.assertIn("-DSQDIFF_BUILD_TESTS=OFF", setup_options)
        self.assertIn("-DSQDIFF_BUILD_TESTS=ON", test_options)

        with self.subTest("setup.sh on a fresh build directory"):
            self.configure(setup_options)
            self.assert_setup_configuration()
            # Only on the fresh directory: the cache keeps what an earlier configure found.
            self.assert_reads_only_main_packages()

        with self.subTest("test.sh after setup.sh"):
            self.configure(test_options)
            programs = self.linked_programs()
            self.assertTrue(MAIN_JOB_PROGRAMS <= programs, MAIN_JOB_PROGRAMS - programs)
            for program in ("tests/differential_test", "tools/tests/tools_npy_test", "bench/sqdiff_bench"):
                self.assertIn(program, programs)
            names = self.listed_tests()
            for name in ("python_pytest", "scripts.build_packages", "scripts.build_options", "readme_example_runs"):
                self.assertIn(name, names)

        with self.subTest("setup.sh after test.sh"):
            self.configure(setup_options)
            self.assert_setup_configuration()


if __name__ == "__main__":
    unittest.main()
