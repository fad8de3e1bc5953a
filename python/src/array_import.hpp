// Arrays that are not NumPy's own: ml_dtypes.bfloat16 arrays (NumPy arrays of
// a dtype NumPy itself does not know) and objects exposing DLPack
// (__dlpack__, __dlpack_device__), such as PyTorch and JAX tensors. Both are
// read in place, without a copy (but a PyTorch tensor with the negative bit,
// copied with its sign applied); a tensor on a device other than the CPU is
// refused, naming its device. (__array_interface__ and __array_struct__
// objects need nothing here: numpy.asarray wraps their memory without copying.)
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <initializer_list>
#include <optional>
#include <string_view>

#include "sqdiff/sqdiff.hpp"

namespace sqdiff_python {

namespace py = pybind11;

// True for ml_dtypes.bfloat16 (in either byte order). Never imports
// ml_dtypes: an array of that dtype exists only once ml_dtypes is imported.
bool is_ml_dtypes_bfloat16(const py::dtype& dtype);

// The dtype of a new result of type `dtype` computed from `inputs`: ml_dtypes'
// bfloat16 when the result is bf16 and an input is an ml_dtypes.bfloat16
// array, else the NumPy storage type (uint16 bits for bf16).
py::dtype result_dtype(sqdiff::DType dtype, std::initializer_list<const py::array*> inputs);

// The array that `object` exposes through DLPack (no copy), or nothing when
// it is a NumPy array or has no __dlpack__. Refuses memory on any device but
// the CPU, naming the device, a PyTorch meta tensor (no data), an object that
// cannot say its device, and objects whose DLPack export NumPy cannot take
// (e.g. DLPack's bfloat16), with the producer's or NumPy's reason. A PyTorch
// tensor with the negative bit is resolved first (a copy with the sign
// applied), since DLPack would export its stored values.
std::optional<py::array> array_from_dlpack(std::string_view op, const char* name, py::handle object);

}  // namespace sqdiff_python
