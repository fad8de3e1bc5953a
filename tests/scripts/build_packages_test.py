#!/usr/bin/python3
"""Tests of scripts/build_packages.py, the check that install-deps installs every Debian package a
build read: on a made-up package database and build directory, so that what is installed on the
machine running the test does not matter. Run by CTest (tests/scripts_tests.cmake)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO_ROOT, "scripts", "build_packages.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import build_packages  # noqa: E402

# root-dev: what install-deps names. Depends on lib-a (not installed) or lib-alt, and on the
# virtual name virt, which provider installs; only recommends recommended. base-tool is required.
STATUS = """\
Package: root-dev
Status: install ok installed
Priority: optional
Depends: lib-a (>= 1.0) | lib-alt:any, virt
Recommends: recommended

Package: lib-alt
Status: install ok installed
Priority: optional

Package: provider
Status: install ok installed
Priority: optional
Provides: virt (= 2)
Pre-Depends: deep

Package: deep
Status: install ok installed
Priority: optional

Package: base-tool
Status: install ok installed
Priority: required

Package: recommended
Status: install ok installed
Priority: optional

Package: removed
Status: deinstall ok config-files
Priority: optional
"""


class BuildPackagesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        self.dpkg = os.path.join(self.root, "dpkg")
        self.system = os.path.join(self.root, "system")
        self.build = os.path.join(self.root, "build")
        for directory in (os.path.join(self.dpkg, "info"), self.system, self.build):
            os.makedirs(directory)
        with open(os.path.join(self.dpkg, "status"), "w") as status:
            status.write(STATUS)
        self.owned = {}
        for package in ("root-dev", "lib-alt", "provider", "deep", "base-tool", "recommended", "removed"):
            self.owned[package] = self.system_file(package + ".cmake")
            list_name = package + (":amd64" if package == "lib-alt" else "") + ".list"
            with open(os.path.join(self.dpkg, "info", list_name), "w") as listing:
                listing.write("/.\n%s\n%s\n" % (self.system, self.owned[package]))

    def tearDown(self):
        self.tmp.cleanup()

    def system_file(self, name):
        path = os.path.join(self.system, name)
        with open(path, "w") as f:
            f.write("x\n")
        return path

    def configure(self, cmake_files, cached=()):
        """A build directory whose configure step read cmake_files and cached `cached` as FILEPATHs."""
        with open(os.path.join(self.build, "build.ninja"), "w") as ninja:
            ninja.write("rule RERUN_CMAKE\n  command = true\n"
                        "build build.ninja: RERUN_CMAKE %s | $\n    %s\n"
                        % (os.path.join(self.build, "CMakeCache.txt"), " ".join(cmake_files)))
        with open(os.path.join(self.build, "CMakeCache.txt"), "w") as cache:
            cache.write("# comment\nCMAKE_BUILD_TYPE:STRING=Release\n")
            for i, path in enumerate(cached):
                cache.write("FOUND_%d_LIBRARY:FILEPATH=%s\nFOUND_%d_DIR:PATH=%s\n" % (i, path, i, self.system))

    def check(self):
        return subprocess.run([sys.executable, SCRIPT, "--dpkg-dir", self.dpkg, "--packages", "root-dev",
                               self.build], text=True, capture_output=True)

    def test_the_roots_their_dependencies_and_the_base_system_are_covered(self):
        # lib-alt: the installed alternative; provider: through the virtual name; deep: its
        # Pre-Depends; base-tool: Priority required; and the build's own files.
        self.configure([self.owned[p] for p in ("root-dev", "lib-alt", "provider", "base-tool")] +
                       [os.path.join(self.build, "CMakeFiles", "x.cmake")], cached=[self.owned["deep"]])
        outcome = self.check()
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        self.assertIn("every one from a package install-deps installs", outcome.stdout)

    def test_a_recommended_package_is_not_covered(self):
        # apt runs with --no-install-recommends: what only a recommendation brings is missing on a
        # fresh machine (libdnnl-dev recommends the OpenCL package its CMake config requires).
        self.configure([self.owned["root-dev"]], cached=[self.owned["recommended"]])
        outcome = self.check()
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("needs Debian's recommended, which scripts/install-deps.sh --tests does not install",
                      outcome.stderr)
        self.assertIn(self.owned["recommended"], outcome.stderr)

    def test_cmake_tools_count_only_when_the_build_runs_them(self):
        # CMake takes lld for CMAKE_LINKER when it is installed and ld when not: it never links
        # with it. CMAKE_AR it runs, so its package counts.
        self.configure([self.owned["root-dev"]])
        with open(os.path.join(self.build, "CMakeCache.txt"), "a") as cache:
            cache.write("CMAKE_LINKER:FILEPATH=%s\n" % self.owned["recommended"])
        self.assertEqual(self.check().returncode, 0, self.check().stderr)
        with open(os.path.join(self.build, "CMakeCache.txt"), "a") as cache:
            cache.write("CMAKE_AR:FILEPATH=%s\n" % self.owned["removed"])
        with open(os.path.join(self.build, "build.ninja"), "a") as ninja:
            ninja.write("# rule STATIC_LIBRARY_LINKER: %s qc $TARGET_FILE $in\n" % self.owned["removed"])
        outcome = self.check()
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("needs Debian's removed", outcome.stderr)
        self.assertNotIn("recommended", outcome.stderr)

    def test_python_modules_the_suite_imported_count(self):
        # python/tests/conftest.py lists them in <build>/python_imports.txt.
        self.configure([self.owned["root-dev"]])
        with open(os.path.join(self.build, "python_imports.txt"), "w") as imports:
            imports.write("%s\n%s\n" % (self.owned["lib-alt"], self.owned["recommended"]))
        outcome = self.check()
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("needs Debian's recommended", outcome.stderr)

    def test_a_package_no_longer_installed_does_not_count_as_covering(self):
        self.configure([self.owned["removed"]])
        outcome = self.check()
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("needs Debian's removed", outcome.stderr)

    def test_a_file_from_no_package_is_reported(self):
        stray = self.system_file("stray.h")
        self.configure([self.owned["root-dev"], stray])
        outcome = self.check()
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("read files no Debian package installed: %s" % stray, outcome.stderr)

    def test_a_symlink_counts_as_the_file_it_names(self):
        # /usr/bin/c++ is an alternatives link to g++, which a package owns.
        link = os.path.join(self.system, "link.cmake")
        os.symlink(self.owned["lib-alt"], link)
        self.configure([link])
        self.assertEqual(self.check().returncode, 0)

    def test_merged_usr_paths_find_their_owner(self):
        owners = {"/lib/x86_64-linux-gnu/libz.so.1": "zlib1g", "/usr/bin/cmake": "cmake"}
        self.assertEqual(build_packages.owner_of("/usr/lib/x86_64-linux-gnu/libz.so.1", owners), "zlib1g")
        self.assertEqual(build_packages.owner_of("/bin/cmake", owners), "cmake")
        self.assertIsNone(build_packages.owner_of("/usr/lib/none.so", owners))

    def test_an_unconfigured_directory_is_an_error(self):
        outcome = self.check()
        self.assertEqual(outcome.returncode, 2)
        self.assertIn("no build.ninja", outcome.stderr)

    def test_by_default_both_of_install_deps_sets_cover(self):
        # scripts/test.sh's builds read the tests' packages as well as the main job's: without
        # --packages the check takes both of install-deps' sets. libgtest-dev is one of the tests',
        # cmake one of the main job's; a made-up database here names them installed.
        with open(os.path.join(self.dpkg, "status"), "a") as status:
            status.write("\nPackage: libgtest-dev\nStatus: install ok installed\nPriority: optional\n"
                         "\nPackage: cmake\nStatus: install ok installed\nPriority: optional\n")
        for package in ("libgtest-dev", "cmake"):
            self.owned[package] = self.system_file(package + ".cmake")
            with open(os.path.join(self.dpkg, "info", package + ".list"), "w") as listing:
                listing.write("/.\n%s\n" % self.owned[package])
        self.configure([self.owned["libgtest-dev"], self.owned["cmake"]])
        outcome = subprocess.run([sys.executable, SCRIPT, "--dpkg-dir", self.dpkg, self.build], text=True,
                                 capture_output=True)
        self.assertEqual(outcome.returncode, 0, outcome.stderr)
        # Given only the main job's set, the test package is missing.
        main_set = " ".join(install_deps("--list"))
        outcome = subprocess.run([sys.executable, SCRIPT, "--dpkg-dir", self.dpkg, "--packages", main_set,
                                  self.build], text=True, capture_output=True)
        self.assertEqual(outcome.returncode, 1)
        self.assertIn("needs Debian's libgtest-dev", outcome.stderr)
        self.assertNotIn("needs Debian's cmake", outcome.stderr)

    def test_install_deps_lists_its_packages_without_installing(self):
        listed = build_packages.install_deps_packages()
        self.assertEqual(listed, install_deps("--list", "--tests"))
        # The two the check found missing on a machine with more installed than install-deps puts
        # there; both are test packages.
        self.assertIn("ocl-icd-opencl-dev", listed)
        self.assertIn("libgmock-dev", listed)
        self.assertEqual(len(listed), len(set(listed)))


def install_deps(*arguments):
    """The package names `scripts/install-deps.sh ARGUMENTS` prints."""
    return subprocess.run(["bash", build_packages.INSTALL_DEPS, *arguments], check=True, text=True,
                          capture_output=True).stdout.split()


class InstallDepsSetsTest(unittest.TestCase):
    """scripts/install-deps.sh's two sets (issue 31): the main job's, which scripts/setup.sh installs,
    and the tests', which scripts/test.sh adds. Which package belongs to which side is checked
    against what CMake reads in tests/scripts/build_options_test.py."""

    def test_the_main_set_is_part_of_the_full_one(self):
        main_set, full = install_deps("--list"), install_deps("--list", "--tests")
        self.assertEqual(full[:len(main_set)], main_set)
        self.assertEqual(install_deps("--tests", "--list"), full)
        self.assertEqual(len(full), len(set(full)))
        self.assertGreater(len(full), len(main_set))

    def test_the_main_set_holds_the_main_jobs_packages_and_no_tests(self):
        main_set = set(install_deps("--list"))
        for package in ("build-essential", "cmake", "libhwy-dev", "libcli11-dev", "libpugixml-dev",
                        "flatbuffers-compiler", "pybind11-dev", "python3-dev", "python3-numpy"):
            self.assertIn(package, main_set)
        # What only the tests, the benchmark and the fuzzers use: the bulk of the old single list
        # (PyTorch alone pulled in about a hundred packages).
        for package in ("libgtest-dev", "libgmock-dev", "libgmp-dev", "libbenchmark-dev", "libeigen3-dev",
                        "libdnnl-dev", "clang-14", "python3-pytest", "python3-torch", "python3-dask",
                        "python3-pandas", "python3-mypy"):
            self.assertNotIn(package, main_set)

    def test_an_unknown_argument_installs_nothing(self):
        outcome = subprocess.run(["bash", build_packages.INSTALL_DEPS, "--test"], text=True, capture_output=True)
        self.assertEqual(outcome.returncode, 2)
        self.assertIn("unknown argument '--test'", outcome.stderr)
        self.assertNotIn("apt-get", outcome.stdout)


if __name__ == "__main__":
    unittest.main()
