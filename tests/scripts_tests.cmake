# Tests of the project's scripts: scripts/build_packages.py, which scripts/test.sh runs on every
# build directory to catch a Debian package the build read but scripts/install-deps.sh does not
# install (tests/scripts/build_packages_test.py, on a made-up package database).
add_test(NAME scripts.build_packages
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/build_packages_test.py -v)
set_tests_properties(scripts.build_packages PROPERTIES LABELS "scripts" TIMEOUT 120)
