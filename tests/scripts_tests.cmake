# Tests of the project's scripts: scripts/build_packages.py, which scripts/test.sh runs on every
# build directory to catch a Debian package the build read but scripts/install-deps.sh does not
# install (tests/scripts/build_packages_test.py, on a made-up package database).
add_test(NAME scripts.build_packages
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/build_packages_test.py -v)
set_tests_properties(scripts.build_packages PROPERTIES LABELS "scripts" TIMEOUT 120)

# What scripts/setup.sh and scripts/test.sh configure in the one build directory they share: setup's
# options build the library, the program, the module and the examples and list no tests, test.sh's
# add the tests, and the directory switches cleanly both ways (tests/scripts/build_options_test.py:
# a scratch directory configured three times, nothing built).
add_test(NAME scripts.build_options
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/build_options_test.py -v)
set_tests_properties(scripts.build_options PROPERTIES LABELS "scripts" TIMEOUT 300)

# The shell commands README.md and docs/cli.md show, as a newcomer types them: glob characters
# quoted, no example overwriting another one's input, the README's sqdiff session printing what it
# shows (tests/scripts/docs_commands_test.py).
if(TARGET sqdiff_cli)
  add_test(NAME scripts.docs_commands
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/docs_commands_test.py $<TARGET_FILE:sqdiff_cli> -v)
  set_tests_properties(scripts.docs_commands PROPERTIES LABELS "scripts" TIMEOUT 120)
endif()

# Issue 34: the program and the Python module use the library through its public headers only
# (scripts/check_public_headers.py; the files still excepted are named in
# tests/scripts/public_headers_only.txt, a list that may only shrink), and the check itself on
# made-up trees (tests/scripts/public_headers_only_test.py).
add_test(NAME scripts.public_headers_only
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/check_public_headers.py ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts.public_headers_only PROPERTIES LABELS "scripts" TIMEOUT 60)
# Calls inside the library go down its floors (api/ -> op families -> shape/,
# kernels/ -> runtime/), read from the objects it is linked from
# (scripts/check_call_floors.py).
add_test(NAME scripts.call_floors
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/check_call_floors.py
                 ${PROJECT_BINARY_DIR}/src/CMakeFiles/sqdiff.dir "--objects=$<JOIN:$<TARGET_OBJECTS:sqdiff>,:>")
set_tests_properties(scripts.call_floors PROPERTIES LABELS "scripts" TIMEOUT 120)
add_test(NAME scripts.public_headers_only_self_test
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/scripts/public_headers_only_test.py -v)
set_tests_properties(scripts.public_headers_only_self_test PROPERTIES LABELS "scripts" TIMEOUT 60)
