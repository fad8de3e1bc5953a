// The compiled part of the reductions, gradients and partial sums:
// sqdiff._sqdiff.reduce, .squared_difference_backward, .subtract_backward and
// the private _partial_* and _bounded_partial_* helpers behind sqdiff.dask. Like the element-wise
// functions, each converts its arguments (binding_common.hpp), releases the
// GIL and calls the library; signatures, weak Python scalars and docstrings
// are in sqdiff/__init__.py.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "array_import.hpp"
#include "binding_common.hpp"
#include "sqdiff/sqdiff.hpp"

namespace sqdiff_python {
namespace {

using sqdiff::DType;
using sqdiff::Shape;

bool is_integer(DType dtype) {
  return dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 && dtype != DType::f64;
}

bool is_signed(DType dtype) {
  return dtype == DType::i8 || dtype == DType::i16 || dtype == DType::i32 || dtype == DType::i64;
}

// Python's default output type of a reduction (SPEC section 7's table): a
// float input's own type; i64/u64 for a sum of integers, f64 for a mean.
DType default_output(DType input, bool mean) {
  if (!is_integer(input)) return input;
  if (mean) return DType::f64;
  return is_signed(input) ? DType::i64 : DType::u64;
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(shape[i]);
  }
  text += ']';
  return text;
}

// The library's message for a shape rule, under the op's name instead of the
// helper's ("reduced_shape: ..." -> "<op>: ...").
template <typename Function>
Shape renamed(std::string_view op, Function&& compute) {
  try {
    return compute();
  } catch (const sqdiff::Error& error) {
    std::string_view message = error.what();
    if (const auto colon = message.find(": "); colon != std::string_view::npos) message.remove_prefix(colon + 2);
    fail(op, std::string(message));
  }
}

// axis=: None (every axis), an int, or a tuple/list of ints.
std::optional<Shape> parse_axes(std::string_view op, py::handle axis) {
  if (axis.is_none()) return std::nullopt;
  if (PyIndex_Check(axis.ptr()) != 0) return Shape{to_int64(op, "axis", axis)};
  if (py::isinstance<py::tuple>(axis) || py::isinstance<py::list>(axis)) {
    Shape axes;
    for (const py::handle item : axis) axes.push_back(to_int64(op, "axis", item));
    return axes;
  }
  type_error(std::string(op) + ": axis must be None, an int or a tuple of ints, not " + type_name(axis));
}

// A shape given as a sequence of ints (or one int for a 1-d shape).
Shape parse_shape(std::string_view op, const char* what, py::handle object) {
  if (PyIndex_Check(object.ptr()) != 0) return Shape{to_int64(op, what, object)};
  const bool is_string = py::isinstance<py::str>(object) || py::isinstance<py::bytes>(object);
  if (is_string || !py::isinstance<py::iterable>(object)) {
    type_error(std::string(op) + ": " + what + " must be a sequence of ints, not " + type_name(object));
  }
  Shape shape;
  for (const py::handle dim : object) shape.push_back(to_int64(op, std::string(what) + " dim", dim));
  return shape;
}

// Where a result goes: a new array, `out` itself, or (for an `out` the
// library cannot address: unaligned or byte-swapped) a temporary that is
// copied into `out` once the call has succeeded.
struct Target {
  py::array array;
  bool copy_back = false;

  sqdiff::TensorView view(DType dtype) {
    return {array.mutable_data(), dtype, shape_of(array), element_strides(array)};
  }
  py::object finish(py::handle out_object) {
    if (!copy_back) return std::move(array);
    const auto done = py::reinterpret_steal<py::object>(
        PyObject_CallFunctionObjArgs(g_copyto, out_object.ptr(), array.ptr(), nullptr));
    if (!done) throw py::error_already_set();
    return py::reinterpret_borrow<py::object>(out_object);
  }
};

// ml_dtypes.bfloat16 when the output is bf16 and one of `inputs` is such an array.
Target new_target(DType dtype, const Shape& shape, std::initializer_list<const py::array*> inputs = {}) {
  return {new_c_array(result_dtype(dtype, inputs), shape), false};  // C-contiguous; 0-d for shape ()
}

// The checks of an out= array that only Python knows (type, writability);
// its shape and dtype are the library's checks.
Target out_target(std::string_view op, py::handle out_object, DType dtype) {
  const auto out = py::reinterpret_borrow<py::array>(out_object);
  if (!out.writeable()) fail(op, "out is read-only");
  if (is_addressable(out)) return {out, false};
  fail_if_self_overlapping(op, out);
  PyObject* temporary =
      PyObject_CallFunctionObjArgs(g_empty, to_tuple(shape_of(out)).ptr(), result_dtype(dtype, {&out}).ptr(), nullptr);
  if (temporary == nullptr) throw py::error_already_set();
  return {py::reinterpret_steal<py::array>(temporary), true};
}

py::array checked_out_array(std::string_view op, py::handle out_object) {
  if (!py::isinstance<py::array>(out_object)) {
    type_error(std::string(op) + ": out must be a numpy.ndarray, not " + type_name(out_object));
  }
  if (!is_exact_ndarray(out_object)) refuse_lossy_conversion(op, "out", out_object);
  return py::reinterpret_borrow<py::array>(out_object);
}

void fail_unless_same_type(std::string_view op, const Input& a, const Input& b) {
  if (a.view.dtype == b.view.dtype) return;
  throw MixedTypes(std::string(op) + ": input types differ: a is " + std::string(sqdiff::dtype_name(a.view.dtype)) +
                   ", b is " + std::string(sqdiff::dtype_name(b.view.dtype)) + " (no implicit conversion)");
}

// What a reduction's dtype= says: "bfloat16" marks uint16 inputs as bf16
// bits (the result is then bf16 bits unless out= says otherwise); any other
// dtype is the output type.
struct ReductionTypes {
  std::optional<DType> input;
  std::optional<DType> output;
};

// The number of (a - b)**2 terms a reduction computes: the broadcast size, or 0
// when the shapes do not broadcast (the library then says why).
py::ssize_t terms(const Input& a, const Input& b, const sqdiff::Broadcast& mode) {
  try {
    py::ssize_t count = 1;
    for (const int64_t dim : sqdiff::broadcast_shape(a.view.shape, b.view.shape, mode)) count *= dim;
    return count;
  } catch (const sqdiff::Error&) {
    return 0;
  }
}

ReductionTypes parse_reduction_dtype(std::string_view op, py::handle dtype) {
  const std::optional<DType> requested = parse_dtype(op, dtype);
  if (requested == DType::bf16) return {DType::bf16, std::nullopt};
  return {std::nullopt, requested};
}

sqdiff::ReduceOptions reduce_options(std::string_view op, py::handle axis, py::handle keepdims,
                                     py::handle broadcast, py::handle broadcast_axis, py::handle threads) {
  sqdiff::ReduceOptions options;
  options.broadcast = parse_broadcast(op, broadcast, broadcast_axis);
  options.axes = parse_axes(op, axis);
  const int truth = PyObject_IsTrue(keepdims.ptr());
  if (truth < 0) throw py::error_already_set();
  options.keepdims = truth == 1;
  options.threads = parse_threads(op, threads);
  return options;
}

py::object reduce(bool mean, py::handle a_object, py::handle b_object, py::handle axis, py::handle keepdims,
                  py::handle dtype, py::handle out_object, py::handle broadcast, py::handle broadcast_axis,
                  py::handle threads) {
  const std::string_view op = mean ? "mean_squared_difference" : "sum_squared_difference";
  const sqdiff::ReduceOptions options = reduce_options(op, axis, keepdims, broadcast, broadcast_axis, threads);
  const ReductionTypes types = parse_reduction_dtype(op, dtype);
  const Input a = make_input(op, "a", a_object, types.input);
  const Input b = make_input(op, "b", b_object, types.input);
  fail_unless_same_type(op, a, b);
  const DType input = a.view.dtype;

  DType output = types.output.value_or(default_output(input, mean));
  Target target;
  if (out_object.is_none()) {
    const Shape broadcast_shape = output_shape(op, a, b, options.broadcast);
    const Shape shape =
        renamed(op, [&] { return sqdiff::reduced_shape(broadcast_shape, options.axes, options.keepdims); });
    target = new_target(output, shape, {&a.array, &b.array});
  } else {
    const py::array out = checked_out_array(op, out_object);
    const std::optional<DType> found = sqdiff_dtype(out.dtype(), input == DType::bf16);
    if (!found) fail(op, "unsupported dtype of out: " + numpy_name(out.dtype()));
    if (types.output && *found != *types.output) {
      fail(op, "out has dtype " + numpy_name(out.dtype()) + ", but dtype=" +
                   numpy_name(storage_dtype(*types.output)) + " was asked for (sqdiff never converts)");
    }
    output = *found;  // without dtype=, out's dtype is the output type, as in NumPy
    target = out_target(op, out_object, output);
  }
  const sqdiff::TensorView out_view = target.view(output);
  {
    const WithoutGilIfWorthIt release(terms(a, b, options.broadcast));
    if (mean) {
      sqdiff::mean_squared_difference(a.view, b.view, out_view, options);
    } else {
      sqdiff::sum_squared_difference(a.view, b.view, out_view, options);
    }
  }
  return target.finish(out_object);
}

// The gradients a backward call was asked for: new arrays for the ones needed,
// null views (which the library skips) for the others.
class GradientTargets {
 public:
  struct Wanted {
    bool needed;
    DType dtype;
    const Shape& shape;
  };

  GradientTargets(Wanted a, Wanted b, std::initializer_list<const py::array*> inputs) {
    if (a.needed) a_.emplace(new_target(a.dtype, a.shape, inputs), a.dtype);
    if (b.needed) b_.emplace(new_target(b.dtype, b.shape, inputs), b.dtype);
  }

  sqdiff::TensorView* a() { return a_ ? &a_->view : nullptr; }
  sqdiff::TensorView* b() { return b_ ? &b_->view : nullptr; }

  py::tuple arrays() { return py::make_tuple(array(a_), array(b_)); }

 private:
  struct Gradient {
    Gradient(Target written, DType dtype) : target(std::move(written)), view(target.view(dtype)) {}
    Target target;
    sqdiff::TensorView view;
  };

  static py::object array(std::optional<Gradient>& gradient) {
    if (!gradient) return py::none();
    return std::move(gradient->target.array);
  }

  std::optional<Gradient> a_;
  std::optional<Gradient> b_;
};

py::tuple squared_difference_backward(py::handle a_object, py::handle b_object, py::handle grad_object,
                                      py::handle broadcast, py::handle broadcast_axis, bool need_a, bool need_b,
                                      py::handle threads, py::handle dtype) {
  constexpr std::string_view op = "squared_difference_backward";
  const sqdiff::Options options = elementwise_options(op, broadcast, broadcast_axis, threads);
  const std::optional<DType> requested = parse_dtype(op, dtype);
  const Input a = make_input(op, "a", a_object, requested);
  const Input b = make_input(op, "b", b_object, requested);
  const Input grad = make_input(op, "grad", grad_object, requested);
  GradientTargets gradients({need_a, a.view.dtype, a.view.shape}, {need_b, b.view.dtype, b.view.shape},
                            {&a.array, &b.array, &grad.array});
  {
    const py::gil_scoped_release release;
    sqdiff::squared_difference_backward(a.view, b.view, grad.view, gradients.a(), gradients.b(), options);
  }
  return gradients.arrays();
}

py::tuple mean_squared_difference_backward(py::handle a_object, py::handle b_object, py::handle broadcast,
                                           py::handle broadcast_axis, bool need_a, bool need_b, py::handle threads,
                                           py::handle dtype) {
  constexpr std::string_view op = "mean_squared_difference_backward";
  const sqdiff::Options options = elementwise_options(op, broadcast, broadcast_axis, threads);
  const std::optional<DType> requested = parse_dtype(op, dtype);
  const Input a = make_input(op, "a", a_object, requested);
  const Input b = make_input(op, "b", b_object, requested);
  fail_unless_same_type(op, a, b);
  GradientTargets gradients({need_a, a.view.dtype, a.view.shape}, {need_b, b.view.dtype, b.view.shape},
                            {&a.array, &b.array});
  {
    const py::gil_scoped_release release;
    sqdiff::mean_squared_difference_backward(a.view, b.view, gradients.a(), gradients.b(), options);
  }
  return gradients.arrays();
}

py::tuple subtract_backward(py::handle grad_object, py::handle a_shape_object, py::handle b_shape_object,
                            py::handle broadcast, py::handle broadcast_axis, bool need_a, bool need_b,
                            py::handle threads, py::handle dtype) {
  constexpr std::string_view op = "subtract_backward";
  const sqdiff::Options options = elementwise_options(op, broadcast, broadcast_axis, threads);
  const std::optional<DType> requested = parse_dtype(op, dtype);
  const Input grad = make_input(op, "grad", grad_object, requested);
  const Shape a_shape = parse_shape(op, "a_shape", a_shape_object);
  const Shape b_shape = parse_shape(op, "b_shape", b_shape_object);
  // The library sees only the shapes of the gradients it writes; the two
  // shapes given must broadcast to grad's shape whichever are asked for.
  const Shape expected = renamed(op, [&] { return sqdiff::broadcast_shape(a_shape, b_shape, options.broadcast); });
  if (expected != grad.view.shape) {
    fail(op, "grad has shape " + shape_text(grad.view.shape) + ", not the broadcast shape " + shape_text(expected) +
                 " of a_shape " + shape_text(a_shape) + " and b_shape " + shape_text(b_shape));
  }
  const DType dtype_out = grad.view.dtype;
  GradientTargets gradients({need_a, dtype_out, a_shape}, {need_b, dtype_out, b_shape}, {&grad.array});
  {
    const py::gil_scoped_release release;
    sqdiff::subtract_backward(grad.view, gradients.a(), gradients.b(), options);
  }
  return gradients.arrays();
}

// --- the partial sums behind sqdiff.dask --------------------------------------

DType input_type(std::string_view op, py::handle dtype) {
  const std::optional<DType> found = parse_dtype(op, dtype);
  if (!found) fail(op, "dtype (the inputs' element type) is required, not None");
  return *found;
}

py::int_ partial_sum_words(py::handle dtype) {
  return py::int_(sqdiff::partial_sum_words(input_type("_partial_sum_words", dtype)));
}

py::array partial_sum_squared_difference(py::handle a_object, py::handle b_object, py::handle axis,
                                         py::handle keepdims, py::handle broadcast, py::handle broadcast_axis,
                                         py::handle threads, py::handle dtype) {
  constexpr std::string_view op = "_partial_sum_squared_difference";
  const sqdiff::ReduceOptions options = reduce_options(op, axis, keepdims, broadcast, broadcast_axis, threads);
  const std::optional<DType> requested = parse_dtype(op, dtype);
  const Input a = make_input(op, "a", a_object, requested);
  const Input b = make_input(op, "b", b_object, requested);
  fail_unless_same_type(op, a, b);
  const Shape broadcast_shape = output_shape(op, a, b, options.broadcast);
  Shape shape = renamed(op, [&] { return sqdiff::reduced_shape(broadcast_shape, options.axes, options.keepdims); });
  shape.push_back(static_cast<int64_t>(sqdiff::partial_sum_words(a.view.dtype)));
  py::array partials = new_c_array(py::dtype("uint64"), shape);
  auto* data = static_cast<uint64_t*>(partials.mutable_data());
  {
    const py::gil_scoped_release release;
    sqdiff::partial_sum_squared_difference(a.view, b.view, data, options);
  }
  return partials;
}

// A C-contiguous uint64 array of states: shape (..., words).
void check_states(std::string_view op, const char* name, const py::array& states, std::size_t words) {
  if (sqdiff_dtype(states.dtype(), false) != DType::u64 || !is_addressable(states)) {
    fail(op, std::string(name) + " must be a uint64 array, not " + numpy_name(states.dtype()));
  }
  if (states.ndim() < 1 || static_cast<std::size_t>(states.shape(states.ndim() - 1)) != words) {
    fail(op, std::string(name) + " has shape " + shape_text(shape_of(states)) + "; its last dim must be " +
                 std::to_string(words) + ", the words of one state");
  }
  if (!(states.flags() & py::array::c_style)) fail(op, std::string(name) + " must be C-contiguous");
}

py::object combine_partial_sums(py::handle dtype, py::handle into_object, py::handle from_object) {
  constexpr std::string_view op = "_combine_partial_sums";
  const DType input = input_type(op, dtype);
  const std::size_t words = sqdiff::partial_sum_words(input);
  if (!py::isinstance<py::array>(into_object) || !py::isinstance<py::array>(from_object)) {
    type_error(std::string(op) + ": into and frm must be numpy.ndarray");
  }
  auto into = py::reinterpret_borrow<py::array>(into_object);
  const auto from = py::reinterpret_borrow<py::array>(from_object);
  check_states(op, "into", into, words);
  check_states(op, "frm", from, words);
  if (shape_of(into) != shape_of(from)) {
    fail(op, "into has shape " + shape_text(shape_of(into)) + " but frm has " + shape_text(shape_of(from)));
  }
  if (!into.writeable()) fail(op, "into is read-only");
  const auto outputs = static_cast<int64_t>(into.size() / static_cast<py::ssize_t>(words));
  auto* to = static_cast<uint64_t*>(into.mutable_data());
  const auto* add = static_cast<const uint64_t*>(from.data());
  {
    const py::gil_scoped_release release;
    sqdiff::combine_partial_sums(input, to, add, outputs);
  }
  return py::reinterpret_borrow<py::object>(into_object);
}

py::array finish_partial_sums(py::handle dtype, py::handle partials_object, py::handle count_object, bool mean,
                              py::handle out_dtype) {
  constexpr std::string_view op = "_finish_partial_sums";
  const DType input = input_type(op, dtype);
  const std::size_t words = sqdiff::partial_sum_words(input);
  if (!py::isinstance<py::array>(partials_object)) type_error(std::string(op) + ": partials must be numpy.ndarray");
  const auto partials = py::reinterpret_borrow<py::array>(partials_object);
  check_states(op, "partials", partials, words);
  const int64_t count = to_int64(op, "count", count_object);
  const DType output = parse_dtype(op, out_dtype).value_or(default_output(input, mean));
  Shape shape = shape_of(partials);
  shape.pop_back();
  Target target = new_target(output, shape);
  // Dense (empty strides): the library takes only row-major outputs here.
  const sqdiff::TensorView out_view{target.array.mutable_data(), output, shape, {}};
  const auto* states = static_cast<const uint64_t*>(partials.data());
  {
    const py::gil_scoped_release release;
    sqdiff::finish_partial_sums(input, states, count, mean, out_view);
  }
  return std::move(target.array);
}

// --- the bounded partial sums: sqdiff.dask's fast path ----------------------

py::array bounded_partial_sum_squared_difference(py::handle a_object, py::handle b_object, py::handle axis,
                                                 py::handle keepdims, py::handle broadcast, py::handle broadcast_axis,
                                                 py::handle threads, py::handle dtype, py::handle out_dtype) {
  constexpr std::string_view op = "_bounded_partial_sum_squared_difference";
  const sqdiff::ReduceOptions options = reduce_options(op, axis, keepdims, broadcast, broadcast_axis, threads);
  const std::optional<DType> requested = parse_dtype(op, dtype);
  const Input a = make_input(op, "a", a_object, requested);
  const Input b = make_input(op, "b", b_object, requested);
  fail_unless_same_type(op, a, b);
  const DType output = parse_dtype(op, out_dtype).value_or(default_output(a.view.dtype, false));
  const Shape broadcast_shape = output_shape(op, a, b, options.broadcast);
  Shape shape = renamed(op, [&] { return sqdiff::reduced_shape(broadcast_shape, options.axes, options.keepdims); });
  shape.push_back(static_cast<int64_t>(sqdiff::kBoundedPartialSumWords));
  py::array states = new_c_array(py::dtype("uint64"), shape);
  auto* data = static_cast<uint64_t*>(states.mutable_data());
  {
    const py::gil_scoped_release release;
    sqdiff::bounded_partial_sum_squared_difference(a.view, b.view, output, data, options);
  }
  return states;
}

py::object combine_bounded_partial_sums(py::handle dtype, py::handle into_object, py::handle from_object) {
  constexpr std::string_view op = "_combine_bounded_partial_sums";
  const DType input = input_type(op, dtype);
  if (!py::isinstance<py::array>(into_object) || !py::isinstance<py::array>(from_object)) {
    type_error(std::string(op) + ": into and frm must be numpy.ndarray");
  }
  auto into = py::reinterpret_borrow<py::array>(into_object);
  const auto from = py::reinterpret_borrow<py::array>(from_object);
  check_states(op, "into", into, sqdiff::kBoundedPartialSumWords);
  check_states(op, "frm", from, sqdiff::kBoundedPartialSumWords);
  if (shape_of(into) != shape_of(from)) {
    fail(op, "into has shape " + shape_text(shape_of(into)) + " but frm has " + shape_text(shape_of(from)));
  }
  if (!into.writeable()) fail(op, "into is read-only");
  const auto outputs = static_cast<int64_t>(into.size() / static_cast<py::ssize_t>(sqdiff::kBoundedPartialSumWords));
  sqdiff::combine_bounded_partial_sums(input, static_cast<uint64_t*>(into.mutable_data()),
                                       static_cast<const uint64_t*>(from.data()), outputs);
  return py::reinterpret_borrow<py::object>(into_object);
}

// (result, undecided): the outputs the states' bounds decide, and a bool
// array marking the others, which the caller sums again exactly.
py::tuple finish_bounded_partial_sums(py::handle dtype, py::handle states_object, py::handle count_object, bool mean,
                                      py::handle out_dtype) {
  constexpr std::string_view op = "_finish_bounded_partial_sums";
  const DType input = input_type(op, dtype);
  if (!py::isinstance<py::array>(states_object)) type_error(std::string(op) + ": states must be numpy.ndarray");
  const auto states = py::reinterpret_borrow<py::array>(states_object);
  check_states(op, "states", states, sqdiff::kBoundedPartialSumWords);
  const int64_t count = to_int64(op, "count", count_object);
  const DType output = parse_dtype(op, out_dtype).value_or(default_output(input, mean));
  Shape shape = shape_of(states);
  shape.pop_back();
  Target target = new_target(output, shape);
  py::array undecided = new_c_array(py::dtype("bool"), shape);
  const sqdiff::TensorView out_view{target.array.mutable_data(), output, shape, {}};
  sqdiff::finish_bounded_partial_sums(input, static_cast<const uint64_t*>(states.data()), count, mean, out_view,
                                      static_cast<uint8_t*>(undecided.mutable_data()));
  return py::make_tuple(std::move(target.array), std::move(undecided));
}

}  // namespace

void define_reductions(py::module_& m) {
  for (const bool mean : {false, true}) {
    m.def(
        mean ? "mean_squared_difference" : "sum_squared_difference",
        [mean](py::handle a, py::handle b, py::handle axis, py::handle keepdims, py::handle dtype, py::handle out,
               py::handle broadcast, py::handle broadcast_axis, py::handle threads) {
          return reduce(mean, a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads);
        },
        py::arg("a"), py::arg("b"), py::arg("axis"), py::arg("keepdims"), py::arg("dtype"), py::arg("out"),
        py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("threads"),
        mean ? "See sqdiff.mean_squared_difference." : "See sqdiff.sum_squared_difference.");
  }
  m.def("squared_difference_backward", &squared_difference_backward, py::arg("a"), py::arg("b"), py::arg("grad"),
        py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("need_a"), py::arg("need_b"), py::arg("threads"),
        py::arg("dtype"), "See sqdiff.squared_difference_backward.");
  m.def("mean_squared_difference_backward", &mean_squared_difference_backward, py::arg("a"), py::arg("b"),
        py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("need_a"), py::arg("need_b"), py::arg("threads"),
        py::arg("dtype"), "See sqdiff.mean_squared_difference_backward.");
  m.def("subtract_backward", &subtract_backward, py::arg("grad"), py::arg("a_shape"), py::arg("b_shape"),
        py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("need_a"), py::arg("need_b"), py::arg("threads"),
        py::arg("dtype"), "See sqdiff.subtract_backward.");
  m.def("partial_sum_words", &partial_sum_words, py::arg("dtype"), "See sqdiff._partial_sum_words.");
  m.def("partial_sum_squared_difference", &partial_sum_squared_difference, py::arg("a"), py::arg("b"),
        py::arg("axis"), py::arg("keepdims"), py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("threads"),
        py::arg("dtype"), "See sqdiff._partial_sum_squared_difference.");
  m.def("combine_partial_sums", &combine_partial_sums, py::arg("dtype"), py::arg("into"), py::arg("frm"),
        "See sqdiff._combine_partial_sums.");
  m.def("finish_partial_sums", &finish_partial_sums, py::arg("dtype"), py::arg("partials"), py::arg("count"),
        py::arg("mean"), py::arg("out_dtype"), "See sqdiff._finish_partial_sums.");
  m.def("bounded_partial_sum_squared_difference", &bounded_partial_sum_squared_difference, py::arg("a"), py::arg("b"),
        py::arg("axis"), py::arg("keepdims"), py::arg("broadcast"), py::arg("broadcast_axis"), py::arg("threads"),
        py::arg("dtype"), py::arg("out_dtype"), "See sqdiff._bounded_partial_sum_squared_difference.");
  m.def("combine_bounded_partial_sums", &combine_bounded_partial_sums, py::arg("dtype"), py::arg("into"),
        py::arg("frm"), "See sqdiff._combine_bounded_partial_sums.");
  m.def("finish_bounded_partial_sums", &finish_bounded_partial_sums, py::arg("dtype"), py::arg("states"),
        py::arg("count"), py::arg("mean"), py::arg("out_dtype"), "See sqdiff._finish_bounded_partial_sums.");
}

}  // namespace sqdiff_python
