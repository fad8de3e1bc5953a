// The compiled part of the NumPy binding: sqdiff._sqdiff.
//
// It makes Python scalars weak (through sqdiff._weak_scalars), turns NumPy
// arrays into sqdiff views (NumPy's byte strides divided by the item size),
// checks what only Python knows (dtypes, the out= array's
// writability, argument types), releases the GIL and calls the library. The
// public functions, their signatures and their docstrings live in
// sqdiff/__init__.py, which calls into this module.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "array_import.hpp"
#include "binding_common.hpp"
#include "compare_bindings.hpp"
#include "dtype_layout.hpp"
#include "sqdiff/sqdiff.hpp"

namespace py = pybind11;

// Named (not anonymous) so that reduce_bindings.cpp can use the conversions
// binding_common.hpp declares.
namespace sqdiff_python {

using sqdiff::DType;
using sqdiff::Shape;

// Python objects looked up once, when the module is imported, and kept for the
// life of the process (never released, so nothing is freed after the
// interpreter has shut down).
PyObject* g_error = nullptr;         // sqdiff.Error
PyObject* g_mixed_types = nullptr;   // sqdiff._sqdiff.MixedTypesError, a subclass
PyObject* g_asarray = nullptr;       // numpy.asarray
PyObject* g_empty = nullptr;         // numpy.empty
PyObject* g_copyto = nullptr;        // numpy.copyto
PyObject* g_broadcast_to = nullptr;  // numpy.broadcast_to
PyObject* g_masked_array = nullptr;  // numpy.ma.MaskedArray
PyObject* g_generic = nullptr;       // numpy.generic, the NumPy scalars' base

enum class Op { subtract, squared_difference };

std::string_view op_name(Op op) { return op == Op::subtract ? "subtract" : "squared_difference"; }

[[noreturn]] void fail(std::string_view op, const std::string& reason) {
  throw sqdiff::Error(std::string(op) + ": " + reason);
}

[[noreturn]] void type_error(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw py::error_already_set();
}

std::string repr_of(py::handle object) { return py::repr(object).cast<std::string>(); }

std::string type_name(py::handle object) {
  return py::str(py::type::handle_of(object).attr("__name__")).cast<std::string>();
}

constexpr const char* kSupported =
    "supported: float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, "
    "uint64, and bfloat16 as uint16 bits with dtype=\"bfloat16\"";

// NumPy's name of a dtype: "float32", "bool", ">f4", "<U3", "datetime64[ns]".
std::string numpy_name(const py::dtype& dtype) {
  return py::str(static_cast<py::handle>(dtype)).cast<std::string>();
}

// The sqdiff type of a NumPy dtype (in any byte order), or nothing. uint16
// means bf16 when the caller asked for dtype="bfloat16".
std::optional<DType> sqdiff_dtype(const py::dtype& dtype, bool bf16_bits) {
  if (has_fields(dtype)) return std::nullopt;
  if (is_ml_dtypes_bfloat16(dtype)) return DType::bf16;
  const py::ssize_t size = item_size(dtype);
  switch (dtype.kind()) {
    case 'f':
      if (size == 2) return DType::f16;
      if (size == 4) return DType::f32;
      if (size == 8) return DType::f64;
      return std::nullopt;
    case 'i':
      if (size == 1) return DType::i8;
      if (size == 2) return DType::i16;
      if (size == 4) return DType::i32;
      if (size == 8) return DType::i64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DType::u8;
      if (size == 2) return bf16_bits ? DType::bf16 : DType::u16;
      if (size == 4) return DType::u32;
      if (size == 8) return DType::u64;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// NumPy's type number of float16 (NPY_HALF), which pybind11's npy_api does not name.
constexpr int kNpyHalf = 23;

// NumPy's type number of the dtype that stores a sqdiff type (uint16 for bf16's bits).
int storage_typenum(DType dtype) {
  switch (dtype) {
    case DType::f16: return kNpyHalf;
    case DType::bf16: return py::detail::npy_api::NPY_UINT16_;
    case DType::f32: return py::detail::npy_api::NPY_FLOAT_;
    case DType::f64: return py::detail::npy_api::NPY_DOUBLE_;
    case DType::i8: return py::detail::npy_api::NPY_INT8_;
    case DType::i16: return py::detail::npy_api::NPY_INT16_;
    case DType::i32: return py::detail::npy_api::NPY_INT32_;
    case DType::i64: return py::detail::npy_api::NPY_INT64_;
    case DType::u8: return py::detail::npy_api::NPY_UINT8_;
    case DType::u16: return py::detail::npy_api::NPY_UINT16_;
    case DType::u32: return py::detail::npy_api::NPY_UINT32_;
    case DType::u64: return py::detail::npy_api::NPY_UINT64_;
  }
  throw sqdiff::Error("invalid dtype");
}

// The NumPy dtype that stores a sqdiff type (uint16 for bf16's bits): by type
// number, NumPy's own cached descriptor, not a name parsed on every call.
py::dtype storage_dtype(DType dtype) { return py::dtype(storage_typenum(dtype)); }

// A Python integer (anything with __index__) as int64.
int64_t to_int64(std::string_view op, const std::string& what, py::handle object) {
  PyObject* index = PyNumber_Index(object.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    type_error(std::string(op) + ": " + what + " must be an int, not " + type_name(object));
  }
  const py::object owned = py::reinterpret_steal<py::object>(index);
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(owned.ptr(), &overflow);
  if (overflow != 0) fail(op, what + " " + repr_of(owned) + " does not fit in int64");
  if (value == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<int64_t>(value);
}

sqdiff::Broadcast parse_broadcast(std::string_view op, py::handle broadcast, py::handle axis) {
  sqdiff::Broadcast mode;
  bool known = false;
  if (PyUnicode_Check(broadcast.ptr())) {
    // Read in place (UTF-8 cached in the str object): no std::string per call.
    Py_ssize_t length = 0;
    const char* text = PyUnicode_AsUTF8AndSize(broadcast.ptr(), &length);
    if (text == nullptr) {
      PyErr_Clear();
      broadcast.cast<std::string>();  // not UTF-8 (a lone surrogate): pybind11's error, as always
    }
    const std::string_view name(text, static_cast<std::size_t>(length));
    known = true;
    if (name == "numpy") {
      mode.kind = sqdiff::BroadcastKind::numpy;
    } else if (name == "none") {
      mode.kind = sqdiff::BroadcastKind::none;
    } else if (name == "pdpd") {
      mode.kind = sqdiff::BroadcastKind::pdpd;
    } else {
      known = false;
    }
  }
  if (!known) {
    fail(op, "unknown broadcast mode " + repr_of(broadcast) + "; use 'numpy', 'none' or 'pdpd'");
  }
  mode.axis = to_int64(op, "broadcast_axis", axis);
  return mode;
}

int parse_threads(std::string_view op, py::handle threads) {
  if (threads.is_none()) return 0;
  const int64_t count = to_int64(op, "threads", threads);
  // Every count the library would refuse (negative) or cannot hold (beyond
  // int) is refused here, in Python's words: the library's own message names
  // 0, its C++ default, where Python's default is None.
  if (count < 0 || count > INT_MAX) {
    fail(op,
         "threads is " + std::to_string(count) + "; use None for the library default or a positive count");
  }
  return static_cast<int>(count);
}

sqdiff::Options elementwise_options(std::string_view op, py::handle broadcast, py::handle broadcast_axis,
                                    py::handle threads) {
  sqdiff::Options options;
  options.broadcast = parse_broadcast(op, broadcast, broadcast_axis);
  options.threads = parse_threads(op, threads);
  return options;
}

// What dtype= asks for: nothing (take the inputs' dtype), bf16, or one of the
// eleven NumPy types (which the inputs must then already have).
std::optional<DType> parse_dtype(std::string_view op, py::handle dtype) {
  if (dtype.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(dtype)) {
    const std::string name = dtype.cast<std::string>();
    if (name == "bfloat16" || name == "bf16") return DType::bf16;
  }
  py::dtype numpy_dtype;  // an empty handle until converted
  try {
    numpy_dtype = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  } catch (const py::error_already_set&) {
    fail(op, "unknown dtype " + repr_of(dtype) + "; " + kSupported);
  }
  const std::optional<DType> result = sqdiff_dtype(numpy_dtype, false);
  if (!result) fail(op, "unsupported dtype " + numpy_name(numpy_dtype) + "; " + kSupported);
  return result;
}

bool is_exact_ndarray(py::handle object) {
  return Py_TYPE(object.ptr()) == py::detail::npy_api::get().PyArray_Type_;
}

bool is_native_byte_order(const py::dtype& dtype) {
  const char order = dtype.byteorder();
  constexpr char kNative = std::endian::native == std::endian::little ? '<' : '>';
  return order == '=' || order == '|' || order == kNative;
}

// True when sqdiff can address the array's memory as it is: native byte order,
// and every element aligned to the item size (so that NumPy's byte strides are
// whole numbers of elements). Empty arrays are never read or written.
bool is_addressable(const py::array& array) {
  if (array.size() == 0) return true;
  if (!is_native_byte_order(array.dtype())) return false;
  const auto itemsize = static_cast<uintptr_t>(item_size(array));
  if (reinterpret_cast<uintptr_t>(array.data()) % itemsize != 0) return false;
  for (py::ssize_t i = 0; i < array.ndim(); ++i) {
    if (array.shape(i) > 1 && static_cast<uintptr_t>(array.strides(i)) % itemsize != 0) return false;
  }
  return true;
}

Shape shape_of(const py::array& array) { return Shape(array.shape(), array.shape() + array.ndim()); }

py::tuple to_tuple(const Shape& shape) {
  py::tuple tuple(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) tuple[i] = py::int_(shape[i]);
  return tuple;
}

// NumPy's byte strides as element strides (the array must be addressable). A
// dim of size 1 never moves (its stride may be anything in NumPy); an empty
// array addresses nothing, so dense strides describe it as well as any.
Shape element_strides(const py::array& array) {
  if (array.size() == 0) return {};
  const py::ssize_t itemsize = item_size(array);
  Shape strides(static_cast<std::size_t>(array.ndim()));
  for (py::ssize_t i = 0; i < array.ndim(); ++i) {
    strides[static_cast<std::size_t>(i)] = array.shape(i) > 1 ? array.strides(i) / itemsize : 0;
  }
  return strides;
}

// "[3,1,5]", as the library writes shapes in its messages.
std::string bracketed(const Shape& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(values[i]);
  }
  text += ']';
  return text;
}

// The library's rule for output views (SPEC section 4), on NumPy's byte
// strides, for an out= the library never sees because it is written through
// a temporary: conservative, the dims of size > 1 ordered by |stride| must
// nest, each stride reaching past everything the smaller ones reach.
void fail_if_self_overlapping(std::string_view op, const py::array& out) {
  if (out.size() == 0) return;
  std::vector<std::pair<int64_t, int64_t>> dims;  // |byte stride|, size
  Shape byte_strides;
  for (py::ssize_t i = 0; i < out.ndim(); ++i) {
    byte_strides.push_back(out.strides(i));
    if (out.shape(i) > 1) dims.emplace_back(std::abs(static_cast<int64_t>(out.strides(i))), out.shape(i));
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = item_size(out);  // bytes one element and the smaller dims cover
  for (const auto& [stride, size] : dims) {
    if (stride < reach) {
      fail(op, "the output view with shape " + bracketed(shape_of(out)) + " and byte strides " +
                   bracketed(byte_strides) +
                   " may reach one element from two indices (its strides must nest: each larger than the "
                   "reach of the smaller ones)");
    }
    reach += stride * (size - 1);
  }
}

// A copy in native byte order and aligned memory (same values, same type).
// Dims of stride 0 (a broadcast view) are copied once and expanded again, so
// that a small array broadcast to a huge shape stays small.
py::array native_copy(const py::array& array) {
  const py::object native = array.dtype().attr("newbyteorder")("=");
  py::tuple index(static_cast<std::size_t>(array.ndim()));
  bool expanded = false;
  for (py::ssize_t i = 0; i < array.ndim(); ++i) {
    const bool stretched = array.shape(i) > 1 && array.strides(i) == 0;
    expanded = expanded || stretched;
    PyObject* slice = stretched ? PySlice_New(py::int_(0).ptr(), py::int_(1).ptr(), nullptr)
                                : PySlice_New(nullptr, nullptr, nullptr);
    if (slice == nullptr) throw py::error_already_set();
    index[static_cast<std::size_t>(i)] = py::reinterpret_steal<py::object>(slice);
  }
  const py::object compact = expanded ? array[index] : py::object(array);
  py::array copy = compact.attr("astype")(native, py::arg("order") = "C");
  if (!expanded) return copy;
  PyObject* view =
      PyObject_CallFunctionObjArgs(g_broadcast_to, copy.ptr(), to_tuple(shape_of(array)).ptr(), nullptr);
  if (view == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(view);
}

// Objects that numpy.asarray would turn into an array of another meaning:
// a masked array loses its mask, a pandas or xarray object its labels (it
// would be used by position), and a Dask array would be computed whole.
// Each is refused with what to pass instead.
void refuse_lossy_conversion(std::string_view op, const char* name, py::handle object) {
  const int masked = PyObject_IsInstance(object.ptr(), g_masked_array);
  if (masked < 0) throw py::error_already_set();
  if (masked == 1) {
    const std::string instead = std::string_view(name) == "out"
                                    ? "pass out.data and mask the result yourself"
                                    : "pass " + std::string(name) + ".filled(value) or " + name +
                                          ".data to say what masked elements hold";
    fail(op, std::string(name) + " is a numpy.ma.MaskedArray, whose mask sqdiff would ignore; " + instead);
  }
  const auto module = py::str(py::type::handle_of(object).attr("__module__")).cast<std::string>();
  const std::string type = module + "." + type_name(object);
  // pandas 3 names its public classes' module "pandas" (pandas.Series), pandas 2
  // the defining one (pandas.core.series.Series).
  const auto from = [&module](std::string_view package) {
    return module == package || (module.starts_with(package) && module[package.size()] == '.');
  };
  if (from("pandas") || from("xarray")) {
    fail(op, std::string(name) + " is a " + type + ", which sqdiff would use by position, not by its labels; align "
                 "it first, then pass " + name + ".to_numpy()");
  }
  if (from("dask")) {
    fail(op, std::string(name) + " is a " + type + ", which would be computed whole into memory; use "
                 "sqdiff.dask." + std::string(op) + " for a lazy result, or pass " + name + ".compute()");
  }
}

// An ndarray as it is (no copy, no conversion); anything else (lists,
// scalars, ndarray subclasses) through numpy.asarray, which never changes the
// dtype of an array, once refuse_lossy_conversion has let it through.
py::array as_array(std::string_view op, const char* name, py::handle object) {
  if (is_exact_ndarray(object)) {
    return py::reinterpret_borrow<py::array>(object);
  }
  // A NumPy scalar (np.float32(1)) is none of the objects refused below and
  // has no memory to share: straight to its 0-d array.
  const int numpy_scalar = PyObject_IsInstance(object.ptr(), g_generic);
  if (numpy_scalar < 0) throw py::error_already_set();
  if (numpy_scalar == 0) {
    refuse_lossy_conversion(op, name, object);
    if (std::optional<py::array> shared = array_from_dlpack(op, name, object)) return std::move(*shared);
  }
  PyObject* converted = PyObject_CallOneArg(g_asarray, object.ptr());
  if (converted == nullptr) {
    py::error_already_set error;
    // NumPy's ValueError for what is not an array (a ragged list): an invalid call.
    if (error.matches(PyExc_ValueError)) {
      fail(op, std::string(name) + " is not an array: " + py::str(error.value()).cast<std::string>());
    }
    throw error;
  }
  return py::reinterpret_steal<py::array>(converted);
}

Input make_input(std::string_view op, const char* name, py::handle object, std::optional<DType> requested) {
  py::array array = as_array(op, name, object);
  const py::dtype dtype = array.dtype();
  const bool bf16 = requested == DType::bf16;
  const std::optional<DType> found = sqdiff_dtype(dtype, bf16);
  if (bf16 && found != DType::bf16) {
    fail(op, std::string("dtype=\"bfloat16\" takes uint16 arrays of bfloat16 bits, but ") + name +
                 " has dtype " + numpy_name(dtype));
  }
  if (!found)
    fail(op, std::string("unsupported dtype of ") + name + ": " + numpy_name(dtype) + "; " + kSupported);
  if (requested && found != requested) {
    fail(op, std::string(name) + " has dtype " + numpy_name(dtype) + ", but dtype=" +
                 numpy_name(storage_dtype(*requested)) + " was asked for (sqdiff never converts)");
  }
  // Memory sqdiff cannot address directly (unaligned, or in the other byte
  // order) is copied; this is the only case where an input is copied.
  if (!is_addressable(array)) array = native_copy(array);
  sqdiff::ConstTensorView view{array.data(), *found, shape_of(array), element_strides(array)};
  return {std::move(array), std::move(view)};
}

// A new C-contiguous array (0-d for an empty shape), made by NumPy from the
// shape as it is: pybind11's constructor would first copy it and spell out
// the strides (from the item size it reads: see dtype_layout.hpp), two
// allocations a small call notices.
py::array new_c_array(py::dtype dtype, const Shape& shape) {
  static_assert(sizeof(int64_t) == sizeof(Py_intptr_t), "Shape's dims are NumPy's npy_intp");
  const auto& api = py::detail::npy_api::get();
  // PyArray_NewFromDescr takes (steals) the reference to the dtype.
  PyObject* array = api.PyArray_NewFromDescr_(api.PyArray_Type_, dtype.release().ptr(), static_cast<int>(shape.size()),
                                              reinterpret_cast<Py_intptr_t*>(const_cast<int64_t*>(shape.data())),
                                              nullptr, nullptr, 0, nullptr);
  if (array == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(array);
}

// Obtains the library's own message for inputs of two types (it checks the
// types first, before anything is read or written).
[[noreturn]] void fail_on_mixed_types(Op op, const Input& a, const Input& b) {
  const sqdiff::TensorView nowhere{nullptr, a.view.dtype, {}, {}};
  const sqdiff::ConstTensorView no_a{nullptr, a.view.dtype, {}, {}};
  const sqdiff::ConstTensorView no_b{nullptr, b.view.dtype, {}, {}};
  try {
    if (op == Op::subtract) {
      sqdiff::subtract(no_a, no_b, nowhere);
    } else {
      sqdiff::squared_difference(no_a, no_b, nowhere);
    }
  } catch (const sqdiff::Error& error) {
    throw MixedTypes(error.what());  // the library's message; Python promotes
  }
  fail(op_name(op), "input types differ");  // not reached: the library throws
}

// The broadcast shape, with the op's name in front of the library's message.
Shape output_shape(std::string_view op, const Input& a, const Input& b, sqdiff::Broadcast mode) {
  try {
    return sqdiff::broadcast_shape(a.view.shape, b.view.shape, mode);
  } catch (const sqdiff::Error& error) {
    constexpr std::string_view kPrefix = "broadcast_shape: ";
    std::string_view message = error.what();
    if (message.starts_with(kPrefix)) message.remove_prefix(kPrefix.size());
    fail(op, std::string(message));
  }
}

// True for what may be a weak Python scalar: a bool, int or float, or an
// instance of a subclass (np.float64 too, which resolve tells apart).
bool may_be_python_scalar(py::handle object) { return PyLong_Check(object.ptr()) || PyFloat_Check(object.ptr()); }

// The common weak scalar, a Python float beside a float32 or float64 ndarray,
// converted here as _weak_scalars does it (the value rounded once to nearest
// even into the array's type; beyond its range, inf): a 0-d array of the
// array's dtype. Nothing for any other pair, which resolve converts.
std::optional<py::object> weak_float(py::handle scalar, py::handle array_object) {
  if (!PyFloat_CheckExact(scalar.ptr()) || !is_exact_ndarray(array_object)) return std::nullopt;
  const py::dtype dtype = py::reinterpret_borrow<py::array>(array_object).dtype();
  if (dtype.kind() != 'f' || !is_native_byte_order(dtype)) return std::nullopt;
  const double value = PyFloat_AS_DOUBLE(scalar.ptr());
  if (item_size(dtype) == 8) {
    py::array converted = new_c_array(dtype, Shape{});
    *static_cast<double*>(converted.mutable_data()) = value;
    return converted;
  }
  if (item_size(dtype) == 4) {
    py::array converted = new_c_array(dtype, Shape{});
    // The C conversion rounds to nearest even (the default rounding mode) and
    // gives inf from float32's largest value plus half an ulp on, as NumPy does.
    *static_cast<float*>(converted.mutable_data()) = static_cast<float>(value);
    return converted;
  }
  return std::nullopt;  // float16 (and long double): resolve
}

// a and b with their Python scalars made weak by sqdiff._weak_scalars.resolve,
// the one place that knows the rules (it raises sqdiff.Error for a scalar that
// does not fit); a call without one costs two type checks.
std::pair<py::object, py::object> resolve_python_scalars(std::string_view op, py::handle a, py::handle b,
                                                         py::handle dtype) {
  if (!may_be_python_scalar(a) && !may_be_python_scalar(b)) {
    return {py::reinterpret_borrow<py::object>(a), py::reinterpret_borrow<py::object>(b)};
  }
  if (std::optional<py::object> weak_b = weak_float(b, a)) return {py::reinterpret_borrow<py::object>(a), *weak_b};
  if (std::optional<py::object> weak_a = weak_float(a, b)) return {*weak_a, py::reinterpret_borrow<py::object>(b)};
  static PyObject* const resolve =
      py::object(py::module_::import("sqdiff._weak_scalars").attr("resolve")).release().ptr();
  const py::object resolved = py::reinterpret_steal<py::object>(PyObject_CallFunctionObjArgs(
      resolve, py::str(std::string(op)).ptr(), py::make_tuple(a, b).ptr(), dtype.ptr(), nullptr));
  if (!resolved) throw py::error_already_set();
  return {resolved[py::int_(0)], resolved[py::int_(1)]};
}

py::object run(Op op, py::handle a_given, py::handle b_given, py::handle broadcast, py::handle axis,
               py::handle out_object, py::handle threads, py::handle dtype) {
  const std::string_view name = op_name(op);
  const auto [a_object, b_object] = resolve_python_scalars(name, a_given, b_given, dtype);
  const sqdiff::Options options = elementwise_options(name, broadcast, axis, threads);
  const std::optional<DType> requested = parse_dtype(name, dtype);
  const Input a = make_input(name, "a", a_object, requested);
  const Input b = make_input(name, "b", b_object, requested);
  if (a.view.dtype != b.view.dtype) fail_on_mixed_types(op, a, b);

  std::optional<py::array> target;  // where the library writes
  DType out_dtype = a.view.dtype;
  bool copy_back = false;
  if (out_object.is_none()) {
    const Shape shape = output_shape(name, a, b, options.broadcast);
    // C-contiguous, 0-d for a 0-d result; ml_dtypes.bfloat16 for such inputs.
    target.emplace(new_c_array(result_dtype(a.view.dtype, {&a.array, &b.array}), shape));
  } else {
    if (!py::isinstance<py::array>(out_object)) {
      type_error(std::string(name) + ": out must be a numpy.ndarray, not " + type_name(out_object));
    }
    const auto out = py::reinterpret_borrow<py::array>(out_object);
    if (!is_exact_ndarray(out_object)) refuse_lossy_conversion(name, "out", out_object);
    if (!out.writeable()) fail(name, "out is read-only");
    const std::optional<DType> found = sqdiff_dtype(out.dtype(), requested == DType::bf16);
    if (!found) {
      fail(name, "unsupported dtype of out: " + numpy_name(out.dtype()) + "; " + kSupported);
    }
    out_dtype = *found;
    if (is_addressable(out)) {
      target = out;
    } else {
      // The library checks the temporary, not `out` itself: check here that
      // no two indices of `out` reach one element (last write would win).
      fail_if_self_overlapping(name, out);
      // Unaligned or byte-swapped: compute into a temporary, then let NumPy
      // copy the values over (shape and type are still the library's checks).
      PyObject* temporary = PyObject_CallFunctionObjArgs(g_empty, to_tuple(shape_of(out)).ptr(),
                                                         result_dtype(*found, {&out}).ptr(), nullptr);
      if (temporary == nullptr) throw py::error_already_set();
      target = py::reinterpret_steal<py::array>(temporary);
      copy_back = true;
    }
  }

  const sqdiff::TensorView out_view{target->mutable_data(), out_dtype, shape_of(*target),
                                    element_strides(*target)};
  {
    // The arrays stay referenced (a, b, target, out_object); nothing touches
    // Python objects until the GIL is back.
    const WithoutGilIfWorthIt release(target->size());
    if (op == Op::subtract) {
      sqdiff::subtract(a.view, b.view, out_view, options);
    } else {
      sqdiff::squared_difference(a.view, b.view, out_view, options);
    }
  }
  if (copy_back) {
    const py::object done = py::reinterpret_steal<py::object>(
        PyObject_CallFunctionObjArgs(g_copyto, out_object.ptr(), target->ptr(), nullptr));
    if (!done) throw py::error_already_set();
  }
  if (out_object.is_none()) return std::move(*target);
  return py::reinterpret_borrow<py::object>(out_object);
}

// A shape: a sequence of ints, or one int for a 1-d shape.
Shape to_shape(const char* what, py::handle object) {
  const bool is_string = py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object);
  if (!is_string && py::isinstance<py::iterable>(object)) {
    Shape shape;
    for (const py::handle dim : object) {
      shape.push_back(to_int64("broadcast_shape", std::string(what) + " dim", dim));
    }
    return shape;
  }
  if (!is_string && PyIndex_Check(object.ptr()) != 0) return {to_int64("broadcast_shape", what, object)};
  type_error(std::string("broadcast_shape: ") + what + " must be a sequence of ints, not " +
             type_name(object));
}

py::tuple broadcast_shape(py::handle a, py::handle b, py::handle broadcast, py::handle axis) {
  const Shape shape_a = to_shape("shape_a", a);
  const Shape shape_b = to_shape("shape_b", b);
  const sqdiff::Broadcast mode = parse_broadcast("broadcast_shape", broadcast, axis);
  return to_tuple(sqdiff::broadcast_shape(shape_a, shape_b, mode));
}

// The element-wise functions as plain CPython METH_FASTCALL functions rather
// than through pybind11's dispatcher, which costs a sizeable part of a call on
// a small array (overload resolution, an argument vector, a function record).
// Exceptions become Python's exactly as pybind11 does it: error_already_set
// restored, anything else through the registered translators (sqdiff::Error
// as sqdiff.Error, pybind11's and the standard exceptions as its defaults).
template <Op op>
PyObject* elementwise_entry(PyObject* /*module*/, PyObject* const* args, Py_ssize_t count) {
  if (count != 7) {
    PyErr_Format(PyExc_TypeError, "%s() takes 7 positional arguments (a, b, broadcast, axis, out, threads, dtype), "
                 "%zd given", std::string(op_name(op)).c_str(), count);
    return nullptr;
  }
  try {
    return run(op, args[0], args[1], args[2], args[3], args[4], args[5], args[6]).release().ptr();
  } catch (py::error_already_set& error) {
    error.restore();
    return nullptr;
  } catch (...) {
    if (py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) ||
        py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators)) {
      return nullptr;
    }
    PyErr_SetString(PyExc_SystemError, "Exception escaped from default exception translator!");
    return nullptr;
  }
}

// Static: CPython keeps pointers to these for the life of the functions.
PyMethodDef g_elementwise_methods[] = {
    {"subtract", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&elementwise_entry<Op::subtract>)),
     METH_FASTCALL, "subtract(a, b, broadcast, axis, out, threads, dtype)\n--\n\nout = a - b; see sqdiff.subtract."},
    {"squared_difference",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&elementwise_entry<Op::squared_difference>)),
     METH_FASTCALL,
     "squared_difference(a, b, broadcast, axis, out, threads, dtype)\n--\n\nout = (a - b)**2; see "
     "sqdiff.squared_difference."},
};

void add_elementwise_functions(py::module_& module) {
  for (PyMethodDef& method : g_elementwise_methods) {
    PyObject* function = PyCFunction_NewEx(&method, nullptr, module.attr("__name__").ptr());
    if (function == nullptr) throw py::error_already_set();
    module.add_object(method.ml_name, py::reinterpret_steal<py::object>(function));
  }
}

PyObject* numpy_function(const char* name) {
  return py::object(py::module_::import("numpy").attr(name)).release().ptr();
}

}  // namespace sqdiff_python

using namespace sqdiff_python;

PYBIND11_MODULE(_sqdiff, m) {
  m.doc() = "The compiled part of sqdiff's NumPy binding; use the sqdiff package instead.";
  // Before anything reads a dtype: the layout of the running NumPy's dtypes
  // (an ImportError naming the build to use if this pybind11 cannot read them).
  check_dtype_layout();

  g_asarray = numpy_function("asarray");
  g_empty = numpy_function("empty");
  g_copyto = numpy_function("copyto");
  g_broadcast_to = numpy_function("broadcast_to");
  g_generic = numpy_function("generic");
  g_masked_array = py::object(py::module_::import("numpy.ma").attr("MaskedArray")).release().ptr();

  g_error = PyErr_NewExceptionWithDoc(
      "sqdiff.Error",
      "Raised for every invalid call: shapes that do not broadcast, mixed or unsupported dtypes,\n"
      "an out= array of the wrong shape or dtype or read-only, an unknown broadcast mode or\n"
      "dtype name, a negative thread count. A ValueError; the message is the library's and\n"
      "names the operation, the shapes, the mode and what failed. Nothing has been written to\n"
      "out when it is raised.",
      PyExc_ValueError, nullptr);
  if (g_error == nullptr) throw py::error_already_set();
  m.add_object("Error", py::handle(g_error));
  g_mixed_types = PyErr_NewExceptionWithDoc(
      "sqdiff._sqdiff.MixedTypesError",
      "Inputs of two dtypes, raised by the compiled functions, which never convert; sqdiff's\n"
      "public functions catch it and promote the inputs as NumPy's result_type does.",
      g_error, nullptr);
  if (g_mixed_types == nullptr) throw py::error_already_set();
  m.add_object("MixedTypesError", py::handle(g_mixed_types));
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const MixedTypes& e) {
      PyErr_SetString(g_mixed_types, e.what());
    } catch (const sqdiff::Error& e) {
      PyErr_SetString(g_error, e.what());
    }
  });

  m.attr("__version__") = sqdiff::kVersion;

  add_elementwise_functions(m);
  m.def("broadcast_shape", &broadcast_shape, py::arg("shape_a"), py::arg("shape_b"), py::arg("broadcast"),
        py::arg("axis"), "See sqdiff.broadcast_shape.");
  m.def("simd_target", &sqdiff::active_simd_target, "See sqdiff.simd_target.");
  m.def(
      "as_array",
      [](const std::string& op, const std::string& name, py::handle object) {
        return as_array(op, name.c_str(), object);
      },
      py::arg("op"), py::arg("name"), py::arg("object"),
      "An input as the functions read it (a NumPy array, no copy where none is needed); for sqdiff._promotion.");
  m.def(
      "compiled_simd_targets",
      [] {
        py::list names;
        for (const std::string& name : sqdiff::compiled_simd_targets()) names.append(name);
        return names;
      },
      "See sqdiff.compiled_simd_targets.");
  define_reductions(m);
  define_quantized(m);
  define_compare(m);
}
