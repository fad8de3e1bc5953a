// What the compiled module's source files share: the conversions between
// Python objects and sqdiff views, defined in sqdiff_module.cpp (with the
// element-wise functions) and used by reduce_bindings.cpp (reductions,
// gradients and the partial sums behind sqdiff.dask).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_python {

namespace py = pybind11;

extern PyObject* g_empty;   // numpy.empty
extern PyObject* g_copyto;  // numpy.copyto

// Throws sqdiff::Error("<op>: <reason>"), which Python sees as sqdiff.Error.
[[noreturn]] void fail(std::string_view op, const std::string& reason);

// Inputs of two dtypes: Python sees sqdiff._sqdiff.MixedTypesError, an
// sqdiff.Error that sqdiff/__init__.py catches to promote the inputs as NumPy
// would (sqdiff/_promotion.py). Raised before anything is written.
struct MixedTypes : sqdiff::Error {
  using sqdiff::Error::Error;
};
// Raises a Python TypeError with `message`.
[[noreturn]] void type_error(const std::string& message);
std::string type_name(py::handle object);
std::string repr_of(py::handle object);
// NumPy's name of a dtype: "float32", "bool", ">f4".
std::string numpy_name(const py::dtype& dtype);

// A Python integer (anything with __index__) as int64; TypeError otherwise.
int64_t to_int64(std::string_view op, const std::string& what, py::handle object);
// The broadcast mode named `broadcast`, aligned at `axis` for pdpd.
sqdiff::Broadcast parse_broadcast(std::string_view op, py::handle broadcast, py::handle axis);
// None -> 0 (the library's default), else the count (0 too); a negative count
// or one beyond int is an Error.
int parse_threads(std::string_view op, py::handle threads);
// The element-wise calls' options: broadcast mode and threads.
sqdiff::Options elementwise_options(std::string_view op, py::handle broadcast, py::handle broadcast_axis,
                                    py::handle threads);
// None -> nothing; "bfloat16"/"bf16" -> bf16; a NumPy dtype or its name ->
// that type; anything else is an Error.
std::optional<sqdiff::DType> parse_dtype(std::string_view op, py::handle dtype);

// The sqdiff type of a NumPy dtype (uint16 is bf16 when `bf16_bits`).
std::optional<sqdiff::DType> sqdiff_dtype(const py::dtype& dtype, bool bf16_bits);
// The NumPy dtype that stores a sqdiff type (uint16 for bf16's bits).
py::dtype storage_dtype(sqdiff::DType dtype);

bool is_addressable(const py::array& array);
// A copy in native byte order and aligned memory (same values, same type), for
// an array that is not addressable; a broadcast view's stride-0 dims stay 0.
py::array native_copy(const py::array& array);
// True for a numpy.ndarray itself, not a subclass (so not a masked array): used as
// it is, with no conversion and nothing to refuse.
bool is_exact_ndarray(py::handle object);

// Releases the GIL for the life of the object when the call writes at least
// kGilFreeElements elements. Releasing and taking back the GIL costs about as
// much as computing a few thousand elements, and other Python threads gain
// nothing from a call that short; every call long enough for them to notice
// runs without the GIL.
inline constexpr py::ssize_t kGilFreeElements = 16384;
class WithoutGilIfWorthIt {
 public:
  explicit WithoutGilIfWorthIt(py::ssize_t elements)
      : state_(elements >= kGilFreeElements ? PyEval_SaveThread() : nullptr) {}
  ~WithoutGilIfWorthIt() {
    if (state_ != nullptr) PyEval_RestoreThread(state_);
  }
  WithoutGilIfWorthIt(const WithoutGilIfWorthIt&) = delete;
  WithoutGilIfWorthIt& operator=(const WithoutGilIfWorthIt&) = delete;

 private:
  PyThreadState* state_;
};
sqdiff::Shape shape_of(const py::array& array);
// A new C-contiguous array of `dtype` (0-d for an empty shape), laid out by
// NumPy itself: pybind11's array(dtype, shape) computes the strides from the
// item size it reads, which pybind11 < 2.12 misreads under NumPy 2.
py::array new_c_array(py::dtype dtype, const sqdiff::Shape& shape);
py::tuple to_tuple(const sqdiff::Shape& shape);
sqdiff::Shape element_strides(const py::array& array);
// An Error when an out= written through a temporary could reach one element
// from two indices.
void fail_if_self_overlapping(std::string_view op, const py::array& out);
// Refuses masked arrays, pandas/xarray objects and Dask arrays by name.
void refuse_lossy_conversion(std::string_view op, const char* name, py::handle object);

// An input: the array (which keeps the memory alive while the GIL is
// released) and its view.
struct Input {
  py::array array;
  sqdiff::ConstTensorView view;
};
// `object` as a NumPy array, as the functions read it (DLPack producers in
// place, lists through numpy.asarray), or the error saying why it cannot be one.
py::array as_array(std::string_view op, const char* name, py::handle object);
// `object` as an input of type `requested` (when given), copied only when
// its memory cannot be addressed (unaligned, byte-swapped).
Input make_input(std::string_view op, const char* name, py::handle object, std::optional<sqdiff::DType> requested);

// The broadcast shape of two inputs, the error in the op's name.
sqdiff::Shape output_shape(std::string_view op, const Input& a, const Input& b, sqdiff::Broadcast mode);

// Adds the reductions, gradients and partial-sum helpers to the module.
void define_reductions(py::module_& module);
// Adds quantized_squared_difference and quantized_subtract (quantized_bindings.cpp).
void define_quantized(py::module_& module);

}  // namespace sqdiff_python
