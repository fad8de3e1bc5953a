// ml_dtypes.bfloat16 arrays and DLPack producers as sqdiff inputs; see
// array_import.hpp.
#include "array_import.hpp"

#include <cstdint>
#include <string>

#include "binding_common.hpp"
#include "dtype_layout.hpp"

namespace sqdiff_python {

namespace {

// DLPack's DLDeviceType values (dlpack.h) and their names.
constexpr int64_t kDLCPU = 1;

std::string device_name(int64_t type) {
  switch (type) {
    case 2: return "CUDA";
    case 3: return "CUDA host (pinned)";
    case 4: return "OpenCL";
    case 7: return "Vulkan";
    case 8: return "Metal";
    case 9: return "VPI";
    case 10: return "ROCm";
    case 11: return "ROCm host (pinned)";
    case 12: return "external (kDLExtDev)";
    case 13: return "CUDA managed";
    case 14: return "oneAPI";
    case 15: return "WebGPU";
    case 16: return "Hexagon";
    case 17: return "MAIA";
    default: return "unknown";
  }
}

// True when `object` has the attribute `attribute` and it is true (called
// first, when `call`): PyTorch's tensor.is_meta (a property) and
// tensor.is_neg() (a method), looked up by name so that nothing imports torch.
bool answers_true(py::handle object, const char* attribute, bool call) {
  if (!py::hasattr(object, attribute)) return false;
  py::object answer = object.attr(attribute);
  if (call) answer = answer();
  const int truth = PyObject_IsTrue(answer.ptr());
  if (truth < 0) throw py::error_already_set();
  return truth == 1;
}

// Refuses an object whose __dlpack_device__ is not the CPU, naming the device,
// and one that cannot say its device (a PyTorch meta tensor, which has no data).
void require_cpu(std::string_view op, const char* name, py::handle object) {
  if (answers_true(object, "is_meta", false)) {
    fail(op, std::string(name) + " is a PyTorch meta tensor, which has a shape and a dtype but no data; sqdiff "
                                 "computes on data in CPU memory");
  }
  PyObject* answer = PyObject_CallMethod(object.ptr(), "__dlpack_device__", nullptr);
  if (answer == nullptr) {
    py::error_already_set error;
    if (error.matches(PyExc_Exception)) {
      fail(op, std::string(name) + " (a " + type_name(object) + ") cannot say which device it is on: " +
                   "__dlpack_device__() raised " + py::str(error.type().attr("__name__")).cast<std::string>() + ": " +
                   py::str(error.value()).cast<std::string>() + "; sqdiff reads only CPU memory");
    }
    throw error;
  }
  const py::object device = py::reinterpret_steal<py::object>(answer);
  if (!py::isinstance<py::tuple>(device) || py::len(device) != 2) {
    fail(op, std::string(name) + ".__dlpack_device__() gave " + repr_of(device) +
                 ", not a (device type, device id) pair");
  }
  const int64_t type = to_int64(op, std::string(name) + "'s DLPack device type", device[py::int_(0)]);
  if (type == kDLCPU) return;
  const int64_t id = to_int64(op, std::string(name) + "'s DLPack device id", device[py::int_(1)]);
  fail(op, std::string(name) + " is on a " + device_name(type) + " device (DLPack device type " +
               std::to_string(type) + ", id " + std::to_string(id) +
               "); sqdiff reads only CPU memory: copy it to the CPU first (e.g. tensor.cpu() in PyTorch, "
               "cupy.asnumpy(x) in CuPy)");
}

// True for a PyTorch tensor of dtype torch.bfloat16 (looked up by name: nothing
// imports torch). DLPack has a bfloat16 type, but NumPy no dtype to import it as.
bool is_torch_bfloat16(py::handle object) {
  const auto module = py::str(py::type::handle_of(object).attr("__module__")).cast<std::string>();
  if (module != "torch" && !module.starts_with("torch.")) return false;
  if (!py::hasattr(object, "dtype")) return false;
  return py::str(object.attr("dtype")).cast<std::string>() == "torch.bfloat16";
}

// A PyTorch bfloat16 tensor as an ml_dtypes.bfloat16 array over its memory: its
// bits exported as int16 through DLPack (no copy), viewed as ml_dtypes' type.
// Without ml_dtypes, an error that says what to install or pass instead.
py::object torch_bfloat16_as_ml_dtypes(std::string_view op, const char* name, py::handle object,
                                       const py::object& from_dlpack) {
  py::object ml_dtypes;
  try {
    ml_dtypes = py::module_::import("ml_dtypes");
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_ImportError)) throw;
    fail(op, std::string(name) + " (a " + type_name(object) + ") is a PyTorch bfloat16 tensor, which NumPy reads "
                 "only with ml_dtypes' bfloat16 dtype: install ml_dtypes (pip install ml_dtypes, or pip install "
                 "\"sqdiff[bf16]\") to pass it as it is, or pass its bits, " + name +
                 ".view(torch.int16).numpy().view(numpy.uint16), with dtype=\"bfloat16\"");
  }
  try {
    const py::object bits = object.attr("view")(py::module_::import("torch").attr("int16"));
    const py::object array = from_dlpack(bits);
    return array.attr("view")(ml_dtypes.attr("bfloat16"));
  } catch (py::error_already_set& error) {
    // What PyTorch refuses to export (a tensor that requires grad): its reason.
    if (!error.matches(PyExc_Exception)) throw;
    fail(op, std::string(name) + " (a " + type_name(object) + ") cannot be read through DLPack: " +
                 py::str(error.value()).cast<std::string>());
  }
}

}  // namespace

bool is_ml_dtypes_bfloat16(const py::dtype& dtype) {
  if (dtype.kind() != 'V' || item_size(dtype) != 2 || has_fields(dtype)) return false;
  PyObject* ml_dtypes = PyDict_GetItemString(PyImport_GetModuleDict(), "ml_dtypes");  // borrowed
  if (ml_dtypes == nullptr) return false;
  const py::object bfloat16 = py::reinterpret_borrow<py::object>(ml_dtypes).attr("bfloat16");
  return py::object(dtype.attr("type")).is(bfloat16);
}

py::dtype result_dtype(sqdiff::DType dtype, std::initializer_list<const py::array*> inputs) {
  if (dtype == sqdiff::DType::bf16) {
    for (const py::array* input : inputs) {
      const py::dtype input_dtype = input->dtype();
      if (is_ml_dtypes_bfloat16(input_dtype)) return input_dtype.attr("newbyteorder")("=").cast<py::dtype>();
    }
  }
  return storage_dtype(dtype);
}

std::optional<py::array> array_from_dlpack(std::string_view op, const char* name, py::handle object) {
  if (py::isinstance<py::array>(object) || !py::hasattr(object, "__dlpack__")) return std::nullopt;
  if (py::hasattr(object, "__dlpack_device__")) require_cpu(op, name, object);
  // A PyTorch tensor with the negative bit (torch._neg_view(x), the imaginary
  // part of a conjugated complex tensor) holds the negation of its values, and
  // DLPack carries no such bit: torch 1.13 exports the stored values, which
  // would give every result the opposite sign. resolve_neg() copies it with
  // the sign applied (other tensors are read in place).
  const py::object source = answers_true(object, "is_neg", true) ? py::object(object.attr("resolve_neg")())
                                                                  : py::reinterpret_borrow<py::object>(object);
  const py::object from_dlpack = py::module_::import("numpy").attr("from_dlpack");
  if (is_torch_bfloat16(source)) {
    return py::reinterpret_steal<py::array>(torch_bfloat16_as_ml_dtypes(op, name, source, from_dlpack).release());
  }
  PyObject* imported = PyObject_CallOneArg(from_dlpack.ptr(), source.ptr());
  if (imported == nullptr) {
    py::error_already_set error;
    // What NumPy or the producer refuses (a dtype NumPy lacks, such as DLPack's
    // bfloat16; read-only memory NumPy 1.x cannot take) is an invalid call.
    if (error.matches(PyExc_Exception)) {
      fail(op, std::string(name) + " (a " + type_name(object) + ") cannot be read through DLPack: " +
                   py::str(error.value()).cast<std::string>());
    }
    throw error;
  }
  return py::reinterpret_steal<py::array>(imported);
}

}  // namespace sqdiff_python
