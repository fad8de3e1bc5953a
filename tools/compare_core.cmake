# The core of `sqdiff compare`, shared by the program (tools/CMakeLists.txt)
# and the Python module's sqdiff.compare (python/CMakeLists.txt), so that both
# give the same report by construction: the comparison of two tensors in
# memory, its statistics, the chunked exact sums, and the JSON tree of the
# report. No CLI11, no files: included from whichever of the two comes first.
if(NOT TARGET sqdiff_compare_core)
  add_library(sqdiff_compare_core STATIC
    ${CMAKE_CURRENT_LIST_DIR}/chunk_plan.cpp
    ${CMAKE_CURRENT_LIST_DIR}/chunk_squares.cpp
    ${CMAKE_CURRENT_LIST_DIR}/compare_report.cpp
    ${CMAKE_CURRENT_LIST_DIR}/difference_stats.cpp
    ${CMAKE_CURRENT_LIST_DIR}/json_value.cpp
    ${CMAKE_CURRENT_LIST_DIR}/path_text.cpp
    ${CMAKE_CURRENT_LIST_DIR}/tensor_comparison.cpp
  )
  target_include_directories(sqdiff_compare_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  # The fused float32 pass (difference_stats.cpp, chunk_squares.cpp) calls the
  # library's kernel and bounded-state internals: the library is static.
  target_include_directories(sqdiff_compare_core PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(sqdiff_compare_core PUBLIC sqdiff::sqdiff PRIVATE sqdiff_warnings)
  # The module is a shared object: position-independent code.
  set_target_properties(sqdiff_compare_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
  find_package(Threads REQUIRED)
  target_link_libraries(sqdiff_compare_core PUBLIC Threads::Threads)
  # The tolerance test is NumPy's atol + rtol * |b| in two roundings: no
  # contraction into a fused multiply-add on targets that have one.
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/difference_stats.cpp PROPERTIES COMPILE_OPTIONS
                              -ffp-contract=off)
endif()
