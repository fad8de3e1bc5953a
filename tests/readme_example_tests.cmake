# The README's C++ example: the README shows exactly examples/readme_example.cpp
# (readme_example_matches_readme), and that program builds and prints what the
# README says (readme_example_runs). The main job, examples/seed_examples, is
# run here too (example_seed_examples_runs), so that `scripts/test.sh` covers
# what `scripts/setup.sh` shows.

add_test(NAME readme_example_matches_readme
         COMMAND ${CMAKE_COMMAND}
                 -DREADME=${PROJECT_SOURCE_DIR}/README.md
                 -DEXAMPLE=${PROJECT_SOURCE_DIR}/examples/readme_example.cpp
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/readme_cpp_block.cpp
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_readme_example.cmake)

# Examples may be switched off (SQDIFF_BUILD_EXAMPLES=OFF); the README example is
# still built for its test.
if(NOT TARGET readme_example)
  add_executable(readme_example ${PROJECT_SOURCE_DIR}/examples/readme_example.cpp)
  target_link_libraries(readme_example PRIVATE sqdiff::sqdiff sqdiff_warnings)
endif()
add_test(NAME readme_example_runs
         COMMAND ${CMAKE_COMMAND}
                 -DPROGRAM=$<TARGET_FILE:readme_example>
                 -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/readme_example.expected
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.cmake)

if(TARGET seed_examples)
  add_test(NAME example_seed_examples_runs
           COMMAND ${CMAKE_COMMAND}
                   -DPROGRAM=$<TARGET_FILE:seed_examples>
                   -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/seed_examples.expected
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.cmake)
endif()
set_tests_properties(readme_example_matches_readme readme_example_runs PROPERTIES LABELS "readme")

# docs/compare-api.md shows exactly examples/compare_in_a_test.cpp (its first ```cpp block), and
# that program (a kernel's output checked against a reference, sqdiff/compare.hpp) builds and
# prints what the page says, exiting 0 only when the check passes and the injected bug is caught.
add_test(NAME compare_api_example_matches_docs
         COMMAND ${CMAKE_COMMAND}
                 -DREADME=${PROJECT_SOURCE_DIR}/docs/compare-api.md
                 -DEXAMPLE=${PROJECT_SOURCE_DIR}/examples/compare_in_a_test.cpp
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/compare_api_cpp_block.cpp
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_readme_example.cmake)
if(NOT TARGET compare_in_a_test)
  add_executable(compare_in_a_test ${PROJECT_SOURCE_DIR}/examples/compare_in_a_test.cpp)
  target_link_libraries(compare_in_a_test PRIVATE sqdiff::sqdiff sqdiff_warnings)
endif()
add_test(NAME compare_api_example_runs
         COMMAND ${CMAKE_COMMAND}
                 -DPROGRAM=$<TARGET_FILE:compare_in_a_test>
                 -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/compare_in_a_test.expected
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.cmake)
