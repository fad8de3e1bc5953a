// The compiled part of the quantized ops (SPEC section 9):
// sqdiff._sqdiff.quantized_squared_difference and .quantized_subtract. Each
// reads int8, uint8 or int16 arrays in place (binding_common.hpp's
// conversions), the (scale, zero_point) tuples LiteRT's Interpreter reports,
// and the option names, releases the GIL and calls the library. Nothing is
// promoted: the three tensors must have one of the three types, the same one.
// Signatures and docstrings are in sqdiff/_quantized.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "binding_common.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff_python {
namespace {

using sqdiff::DType;
using sqdiff::Shape;

enum class QuantizedOp { squared_difference, subtract };

std::string_view op_name(QuantizedOp op) {
  return op == QuantizedOp::subtract ? "quantized_subtract" : "quantized_squared_difference";
}

bool is_text(py::handle object) { return PyUnicode_Check(object.ptr()) || PyBytes_Check(object.ptr()); }

// The scale: a real number (Python float or int, a NumPy scalar), rounded to
// the float32 a model stores. A value that float32 cannot hold as a positive
// finite number is refused here, with the value given (the library would only
// see its rounding, 0 or inf); 0, negatives, inf and NaN are the library's
// errors, in its words.
float parse_scale(std::string_view op, const std::string& what, py::handle object) {
  const bool real = !is_text(object) && !PyBool_Check(object.ptr()) && Py_TYPE(object.ptr())->tp_as_number != nullptr &&
                    (Py_TYPE(object.ptr())->tp_as_number->nb_float != nullptr || PyIndex_Check(object.ptr()) != 0);
  if (!real) type_error(std::string(op) + ": " + what + " must be a real number, not " + type_name(object));
  const double value = PyFloat_AsDouble(object.ptr());
  if (value == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  const auto scale = static_cast<float>(value);
  if (std::isfinite(value) && value > 0.0 && !(std::isfinite(scale) && scale > 0.0f)) {
    fail(op, "the " + what + " " + repr_of(object) +
                 " is not a positive finite float32 (a model stores its scales as float32)");
  }
  return scale;
}

// The zero point: a Python or NumPy integer (not a bool, not a float). Within
// int32 the library checks it against the tensor's type; beyond, it fits no
// quantized type.
int32_t parse_zero_point(std::string_view op, const std::string& what, const char* tensor, py::handle object) {
  if (PyBool_Check(object.ptr())) type_error(std::string(op) + ": " + what + " must be an int, not bool");
  const int64_t value = to_int64(op, what, object);
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    fail(op, std::string("the zero point of ") + tensor + " is " + std::to_string(value) +
                 ", outside int32 and so outside every quantized type (i8, u8, i16)");
  }
  return static_cast<int32_t>(value);
}

// a_quant=(scale, zero_point): a tuple (or list) of two, as LiteRT's
// Interpreter reports a tensor's "quantization".
sqdiff::QuantParams parse_quant(std::string_view op, const char* tensor, py::handle object) {
  const std::string keyword = std::string(tensor) + "_quant";
  const bool pair = (PyTuple_Check(object.ptr()) || PyList_Check(object.ptr())) && py::len(object) == 2;
  if (!pair) {
    type_error(std::string(op) + ": " + keyword + " must be a (scale, zero_point) tuple such as (0.5, -3), not " +
               (PyTuple_Check(object.ptr()) || PyList_Check(object.ptr())
                    ? "a " + type_name(object) + " of length " + std::to_string(py::len(object))
                    : type_name(object)));
  }
  const auto items = py::reinterpret_borrow<py::sequence>(object);
  sqdiff::QuantParams params;
  params.scale = parse_scale(op, "scale of " + keyword, items[0]);
  params.zero_point = parse_zero_point(op, "zero point of " + keyword, tensor, items[1]);
  return params;
}

// A name among `names` (an sqdiff.Error naming them otherwise); `what` for the message.
template <typename Value, std::size_t N>
Value parse_name(std::string_view op, const char* what, py::handle object,
                 const std::pair<std::string_view, Value> (&names)[N], const char* choices) {
  if (PyUnicode_Check(object.ptr())) {
    const std::string text = py::str(object).cast<std::string>();
    for (const auto& [name, value] : names) {
      if (text == name) return value;
    }
  }
  fail(op, std::string("unknown ") + what + " " + repr_of(object) + "; use " + choices);
}

sqdiff::Requantize parse_rounding(std::string_view op, py::handle object) {
  static constexpr std::pair<std::string_view, sqdiff::Requantize> kNames[] = {
      {"double", sqdiff::Requantize::double_rounding}, {"single", sqdiff::Requantize::single_rounding}};
  return parse_name(op, "rounding", object, kNames, "'double' (LiteRT's default build) or 'single'");
}

sqdiff::Activation parse_activation(std::string_view op, py::handle object) {
  if (object.is_none()) return sqdiff::Activation::none;
  static constexpr std::pair<std::string_view, sqdiff::Activation> kNames[] = {
      {"none", sqdiff::Activation::none},
      {"relu", sqdiff::Activation::relu},
      {"relu6", sqdiff::Activation::relu6},
      {"relu_n1_to_1", sqdiff::Activation::relu_n1_to_1}};
  return parse_name(op, "activation", object, kNames, "None, 'none', 'relu', 'relu6' or 'relu_n1_to_1'");
}

// pot_scale_int16: a bool (Python's or NumPy's), nothing that merely has a truth value.
bool parse_flag(std::string_view op, const char* what, py::handle object) {
  static PyObject* const numpy_bool = py::object(py::module_::import("numpy").attr("bool_")).release().ptr();
  const int numpy_flag = PyObject_IsInstance(object.ptr(), numpy_bool);
  if (numpy_flag < 0) throw py::error_already_set();
  if (!PyBool_Check(object.ptr()) && numpy_flag == 0) {
    type_error(std::string(op) + ": " + what + " must be a bool, not " + type_name(object));
  }
  return PyObject_IsTrue(object.ptr()) == 1;
}

void call_library(QuantizedOp op, const sqdiff::ConstTensorView& a, sqdiff::QuantParams qa,
                  const sqdiff::ConstTensorView& b, sqdiff::QuantParams qb, const sqdiff::TensorView& out,
                  sqdiff::QuantParams qout, const sqdiff::QuantizedOptions& options) {
  if (op == QuantizedOp::subtract) {
    sqdiff::quantized_subtract(a, qa, b, qb, out, qout, options);
  } else {
    sqdiff::quantized_squared_difference(a, qa, b, qb, out, qout, options);
  }
}

// The library's checks of the types, quantization and options, on empty views
// (which it accepts with null data and reads nothing of): so that a call with
// bad parameters fails before a result array of the broadcast shape is made.
// The views' shapes are not the call's, so they broadcast by NumPy's rules
// (the call's own mode and shapes are checked by the call itself).
void check_parameters(QuantizedOp op, DType a, sqdiff::QuantParams qa, DType b, sqdiff::QuantParams qb, DType out,
                      sqdiff::QuantParams qout, sqdiff::QuantizedOptions options) {
  options.broadcast = {};
  const Shape empty{0};
  call_library(op, {nullptr, a, empty, {}}, qa, {nullptr, b, empty, {}}, qb, {nullptr, out, empty, {}}, qout, options);
}

py::object run(QuantizedOp op, py::handle a_object, py::handle b_object, py::handle a_quant, py::handle b_quant,
               py::handle out_quant, py::handle activation, py::handle pot_scale_int16, py::handle out_object,
               py::handle broadcast, py::handle broadcast_axis, py::handle rounding, py::handle threads) {
  const std::string_view name = op_name(op);
  sqdiff::QuantizedOptions options;
  options.broadcast = parse_broadcast(name, broadcast, broadcast_axis);
  options.threads = parse_threads(name, threads);
  options.rounding = parse_rounding(name, rounding);
  options.activation = parse_activation(name, activation);
  options.pot_scale_int16 = parse_flag(name, "pot_scale_int16", pot_scale_int16);
  const sqdiff::QuantParams qa = parse_quant(name, "a", a_quant);
  const sqdiff::QuantParams qb = parse_quant(name, "b", b_quant);
  const sqdiff::QuantParams qout = parse_quant(name, "out", out_quant);
  // Read as they are: no dtype= and no promotion (the library refuses any
  // type but i8, u8, i16 and any mix of them).
  const Input a = make_input(name, "a", a_object, std::nullopt);
  const Input b = make_input(name, "b", b_object, std::nullopt);

  std::optional<py::array> target;  // where the library writes
  DType out_dtype = a.view.dtype;
  bool copy_back = false;
  if (out_object.is_none()) {
    check_parameters(op, a.view.dtype, qa, b.view.dtype, qb, out_dtype, qout, options);
    target.emplace(new_c_array(storage_dtype(out_dtype), output_shape(name, a, b, options.broadcast)));
  } else {
    if (!py::isinstance<py::array>(out_object)) {
      type_error(std::string(name) + ": out must be a numpy.ndarray, not " + type_name(out_object));
    }
    if (!is_exact_ndarray(out_object)) refuse_lossy_conversion(name, "out", out_object);
    const auto out = py::reinterpret_borrow<py::array>(out_object);
    if (!out.writeable()) fail(name, "out is read-only");
    const std::optional<DType> found = sqdiff_dtype(out.dtype(), false);
    if (!found) fail(name, "unsupported dtype of out: " + numpy_name(out.dtype()) + "; use int8, uint8 or int16");
    out_dtype = *found;
    if (is_addressable(out)) {
      target = out;
    } else {
      // Unaligned or byte-swapped: computed into a temporary that NumPy
      // copies over once the call has succeeded; the library checks the
      // temporary, so `out`'s own overlap is checked here.
      fail_if_self_overlapping(name, out);
      check_parameters(op, a.view.dtype, qa, b.view.dtype, qb, out_dtype, qout, options);
      target.emplace(new_c_array(storage_dtype(out_dtype), shape_of(out)));
      copy_back = true;
    }
  }

  const sqdiff::TensorView out_view{target->mutable_data(), out_dtype, shape_of(*target), element_strides(*target)};
  {
    // a, b, target and out_object stay referenced; no Python object is
    // touched until the GIL is back.
    const WithoutGilIfWorthIt release(target->size());
    call_library(op, a.view, qa, b.view, qb, out_view, qout, options);
  }
  if (copy_back) {
    const auto done = py::reinterpret_steal<py::object>(
        PyObject_CallFunctionObjArgs(g_copyto, out_object.ptr(), target->ptr(), nullptr));
    if (!done) throw py::error_already_set();
  }
  if (out_object.is_none()) return std::move(*target);
  return py::reinterpret_borrow<py::object>(out_object);
}

}  // namespace

void define_quantized(py::module_& module) {
  module.def(
      "quantized_squared_difference",
      [](py::handle a, py::handle b, py::handle a_quant, py::handle b_quant, py::handle out_quant, py::handle out,
         py::handle broadcast, py::handle broadcast_axis, py::handle rounding, py::handle threads) {
        return run(QuantizedOp::squared_difference, a, b, a_quant, b_quant, out_quant, py::none(), py::bool_(true),
                   out, broadcast, broadcast_axis, rounding, threads);
      },
      py::arg("a"), py::arg("b"), py::arg("a_quant"), py::arg("b_quant"), py::arg("out_quant"), py::arg("out"),
      py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("rounding"), py::arg("threads"),
      "See sqdiff.quantized_squared_difference.");
  module.def(
      "quantized_subtract",
      [](py::handle a, py::handle b, py::handle a_quant, py::handle b_quant, py::handle out_quant,
         py::handle activation, py::handle pot_scale_int16, py::handle out, py::handle broadcast,
         py::handle broadcast_axis, py::handle rounding, py::handle threads) {
        return run(QuantizedOp::subtract, a, b, a_quant, b_quant, out_quant, activation, pot_scale_int16, out,
                   broadcast, broadcast_axis, rounding, threads);
      },
      py::arg("a"), py::arg("b"), py::arg("a_quant"), py::arg("b_quant"), py::arg("out_quant"),
      py::arg("activation"), py::arg("pot_scale_int16"), py::arg("out"), py::arg("broadcast"),
      py::arg("broadcast_axis"), py::arg("rounding"), py::arg("threads"), "See sqdiff.quantized_subtract.");
}

}  // namespace sqdiff_python
