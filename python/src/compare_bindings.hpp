// sqdiff.compare's compiled part (compare_bindings.cpp), registered by the
// module's init in sqdiff_module.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace sqdiff_python {

// Defines _compare and _compare_sets on the module (see sqdiff/_compare.py).
void define_compare(pybind11::module_& m);

}  // namespace sqdiff_python
