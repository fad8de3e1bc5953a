# The reports of `sqdiff compare`, shared by the program (tools/CMakeLists.txt)
# and the Python module's sqdiff.compare (python/CMakeLists.txt), so that both
# give the same report by construction: the JSON tree and the text of the
# library's comparison (sqdiff/compare.hpp). Public headers only, no CLI11,
# no files: included from whichever of the two comes first.
if(NOT TARGET sqdiff_compare_core)
  add_library(sqdiff_compare_core STATIC
    ${CMAKE_CURRENT_LIST_DIR}/compare_report.cpp
    ${CMAKE_CURRENT_LIST_DIR}/json_value.cpp
    ${CMAKE_CURRENT_LIST_DIR}/path_text.cpp
  )
  target_include_directories(sqdiff_compare_core PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(sqdiff_compare_core PUBLIC sqdiff::sqdiff PRIVATE sqdiff_warnings)
  # The module is a shared object: position-independent code.
  set_target_properties(sqdiff_compare_core PROPERTIES POSITION_INDEPENDENT_CODE ON)
endif()
