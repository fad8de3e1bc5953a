# The README's C++ example: the README shows exactly examples/readme_example.cpp
# (readme_example_matches_docs), and that program builds and prints what the
# README says (readme_example_runs). The main job, examples/seed_examples, is
# run here too (example_seed_examples_runs), so that `scripts/test.sh` covers
# what `scripts/setup.sh` shows.

# sqdiff_docs_example(PREFIX DOC EXAMPLE EXPECTED): DOC's first ```cpp block is
# byte for byte examples/EXAMPLE.cpp (PREFIX_matches_docs), and that program builds
# and prints EXPECTED's lines (PREFIX_runs). Examples may be switched off
# (SQDIFF_BUILD_EXAMPLES=OFF); the program is still built for its test.
function(sqdiff_docs_example prefix doc example expected)
  add_test(NAME ${prefix}_matches_docs
           COMMAND ${CMAKE_COMMAND}
                   -DREADME=${doc}
                   -DEXAMPLE=${PROJECT_SOURCE_DIR}/examples/${example}.cpp
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/${prefix}_cpp_block.cpp
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/check_readme_example.cmake)
  if(NOT TARGET ${example})
    add_executable(${example} ${PROJECT_SOURCE_DIR}/examples/${example}.cpp)
    target_link_libraries(${example} PRIVATE sqdiff::sqdiff sqdiff_warnings)
  endif()
  add_test(NAME ${prefix}_runs
           COMMAND ${CMAKE_COMMAND}
                   -DPROGRAM=$<TARGET_FILE:${example}>
                   -DEXPECTED=${expected}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.cmake)
endfunction()

sqdiff_docs_example(readme_example ${PROJECT_SOURCE_DIR}/README.md readme_example
                    ${CMAKE_CURRENT_SOURCE_DIR}/readme_example.expected)
if(TARGET seed_examples)
  add_test(NAME example_seed_examples_runs
           COMMAND ${CMAKE_COMMAND}
                   -DPROGRAM=$<TARGET_FILE:seed_examples>
                   -DEXPECTED=${CMAKE_CURRENT_SOURCE_DIR}/seed_examples.expected
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_and_check.cmake)
endif()
set_tests_properties(readme_example_matches_docs readme_example_runs PROPERTIES LABELS "readme")

# docs/compare-api.md shows exactly examples/compare_in_a_test.cpp, and that program (a kernel's
# output checked against a reference, sqdiff/compare.hpp) prints what the page says, exiting 0
# only when the check passes and the injected bug is caught.
sqdiff_docs_example(compare_api_example ${PROJECT_SOURCE_DIR}/docs/compare-api.md compare_in_a_test
                    ${CMAKE_CURRENT_SOURCE_DIR}/compare_in_a_test.expected)
