// The two fields of NumPy's dtype struct (PyArray_Descr) that the binding
// reads and whose place NumPy 2 changed: the item size, and whether the dtype
// has fields (a structured dtype, or a numeric one with named parts such as
// np.dtype((np.int32, {"re": (np.int16, 0), "im": (np.int16, 2)}))).
//
// pybind11 2.12 and later read them in the layout of the NumPy that is
// running. Older pybind11 (Debian 12's is 2.10, which the CMake route builds
// with) knows only NumPy 1's layout, so under NumPy 2 its dtype::itemsize(),
// dtype::has_fields(), array::itemsize() and array(dtype, shape) read other
// bytes: every dtype looked unsupported, and strides came out wrong. With
// such a pybind11 the layout is chosen here, from NumPy's C API feature
// version, and checked against NumPy's Python-level attributes when the
// module is imported (check_dtype_layout), so that a NumPy whose layout
// differs again makes the import fail with what to use instead rather than
// compute with misread dtypes. The fields that did not move (kind, byteorder,
// type_num) and the array struct itself are read through pybind11 as before.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace sqdiff_python {

namespace py = pybind11;

#if PYBIND11_VERSION_HEX >= 0x020C0000

inline py::ssize_t item_size(const py::dtype& dtype) { return dtype.itemsize(); }
inline py::ssize_t item_size(const py::array& array) { return array.itemsize(); }
inline bool has_fields(const py::dtype& dtype) { return dtype.has_fields(); }
// pybind11 reads both layouts itself: nothing to choose or check.
inline void check_dtype_layout() {}

#else

namespace dtype_layout {

// NumPy 2's PyArray_Descr (numpy/ndarraytypes.h, NumPy >= 2.0), which NumPy
// keeps stable across its 2.x releases, followed by the fields only "legacy"
// dtypes have (_PyArray_LegacyDescr: the built-in and user-registered types).
struct NumPy2Descr {
  PyObject_HEAD
  PyTypeObject* typeobj;
  char kind;
  char type;
  char byteorder;
  char former_flags;
  int type_num;
  std::uint64_t flags;
  Py_ssize_t elsize;
  Py_ssize_t alignment;
  PyObject* metadata;
  Py_hash_t hash;
  void* reserved_null[2];
};
struct NumPy2LegacyDescr {
  NumPy2Descr base;
  void* subarray;
  PyObject* fields;
  PyObject* names;
};
// NumPy 2's NPY_VSTRING: type numbers from here on (and negative ones) are not
// legacy dtypes, which have no names field.
constexpr int kFirstNonLegacyType = 2056;
// NumPy's C API feature version of NumPy 2.0 (NPY_2_0_API_VERSION).
constexpr unsigned kNumPy2FeatureVersion = 0x12;

// Set once, when the module is imported, before any dtype is read.
inline bool g_numpy2 = false;

inline py::ssize_t descr_item_size(PyObject* descr) {
  if (g_numpy2) return reinterpret_cast<const NumPy2Descr*>(descr)->elsize;
  return py::detail::array_descriptor_proxy(descr)->elsize;
}

}  // namespace dtype_layout

inline py::ssize_t item_size(const py::dtype& dtype) { return dtype_layout::descr_item_size(dtype.ptr()); }
inline py::ssize_t item_size(const py::array& array) {
  return dtype_layout::descr_item_size(py::detail::array_proxy(array.ptr())->descr);
}
inline bool has_fields(const py::dtype& dtype) {
  if (!dtype_layout::g_numpy2) return dtype.has_fields();
  const auto* descr = reinterpret_cast<const dtype_layout::NumPy2LegacyDescr*>(dtype.ptr());
  const int type_num = descr->base.type_num;
  if (type_num < 0 || type_num >= dtype_layout::kFirstNonLegacyType) return false;
  return descr->names != nullptr;
}

// Chooses the layout of the running NumPy and checks it on dtypes whose item
// size and fields NumPy's Python attributes tell; an ImportError naming the
// build to use when they disagree.
inline void check_dtype_layout() {
  auto& api = py::detail::npy_api::get();
  dtype_layout::g_numpy2 = api.PyArray_GetNDArrayCFeatureVersion_() >= dtype_layout::kNumPy2FeatureVersion;
  const py::module_ numpy = py::module_::import("numpy");
  const py::object make = numpy.attr("dtype");
  py::list examples;
  for (const char* name : {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                           "uint32", "uint64", "bool", "complex128", "U3"}) {
    examples.append(make(name));
  }
  py::list record;  // a structured dtype
  record.append(py::make_tuple("x", "u1"));
  record.append(py::make_tuple("y", "<f8"));
  examples.append(make(record));
  py::dict parts;  // an int32 with named halves: kind 'i', and fields
  parts["re"] = py::make_tuple("<i2", 0);
  parts["im"] = py::make_tuple("<i2", 2);
  examples.append(make(py::make_tuple("<i4", parts)));
  for (const py::handle example : examples) {
    const auto dtype = py::reinterpret_borrow<py::dtype>(example);
    const auto size = example.attr("itemsize").cast<py::ssize_t>();
    const bool fields = !example.attr("names").is_none();
    if (item_size(dtype) == size && has_fields(dtype) == fields) continue;
    PyErr_Format(PyExc_ImportError,
                 "sqdiff._sqdiff, built by the CMake route with pybind11 %d.%d, cannot read the dtypes of NumPy "
                 "%s: it misreads the item size or the fields of %R. Use the sqdiff that pip builds instead "
                 "(`pip install .` from the source directory, or the wheel `pip wheel .` makes), or this build "
                 "with Debian's NumPy (/usr/bin/python3 and python3-numpy)",
                 PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR,
                 py::str(numpy.attr("__version__")).cast<std::string>().c_str(), example.ptr());
    throw py::error_already_set();
  }
}

#endif

}  // namespace sqdiff_python
