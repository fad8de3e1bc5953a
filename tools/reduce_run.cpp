#include "reduce_run.hpp"

#include <charconv>
#include <limits>

#include "input_pair.hpp"
#include "npy.hpp"
#include "shape_count.hpp"

namespace sqdiff::tools {
namespace {

bool is_float(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16 || dtype == DType::f32 || dtype == DType::f64;
}
bool is_signed_integer(DType dtype) {
  return dtype == DType::i8 || dtype == DType::i16 || dtype == DType::i32 || dtype == DType::i64;
}

// NumPy's choice (SPEC 7's "Python default" column): the input type for
// floats; i64/u64 for integer sums, f64 for integer means.
DType default_output(DType input, bool mean) {
  if (is_float(input)) return input;
  if (mean) return DType::f64;
  return is_signed_integer(input) ? DType::i64 : DType::u64;
}

DType parse_output_dtype(const std::string& name) {
  const std::string canonical = name == "bfloat16" ? "bf16" : name;
  for (int i = 0; i < kDTypeCount; ++i) {
    if (dtype_name(static_cast<DType>(i)) == canonical) return static_cast<DType>(i);
  }
  throw sqdiff::Error("unknown --out-dtype \"" + name + "\" (expected one of f16, bf16, f32, f64, i64, u64)");
}

// Parses "0,2", "-1" or "none" into `axes`; returns what is wrong with `text`, or "".
std::string read_axes(const std::string& text, Shape& axes) {
  axes.clear();
  if (text == "none") return "";
  std::size_t begin = 0;
  for (;;) {
    const std::size_t comma = text.find(',', begin);
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    int64_t axis = 0;
    const char* first = text.data() + begin;
    const char* last = text.data() + end;
    const auto [stop, error] = std::from_chars(first, last, axis);
    if (error == std::errc::result_out_of_range && stop == last) {
      return "axis " + std::string(first, last) + " is out of range (" +
             std::to_string(std::numeric_limits<int64_t>::min()) + " to " +
             std::to_string(std::numeric_limits<int64_t>::max()) + ")";
    }
    if (first == last || error != std::errc() || stop != last) {
      return "\"" + text + "\" is not a comma-separated list of integers (e.g. 0,2 or -1) or none";
    }
    axes.push_back(axis);
    if (comma == std::string::npos) return "";
    begin = comma + 1;
  }
}

}  // namespace

Shape parse_axes(const std::string& text) {
  Shape axes;
  const std::string problem = read_axes(text, axes);
  if (!problem.empty()) throw sqdiff::Error("--axes: " + problem);
  return axes;
}

std::string axes_problem(const std::string& text) {
  Shape axes;
  return read_axes(text, axes);
}

std::vector<std::string> out_dtype_names() { return {"f16", "bf16", "bfloat16", "f32", "f64", "i64", "u64"}; }

void run_reduction(const ReduceRequest& request) {
  if (request.kind != "sum" && request.kind != "mean") {
    throw sqdiff::Error("unknown --reduce \"" + request.kind + "\" (expected sum or mean)");
  }
  const bool mean = request.kind == "mean";
  const std::string op = mean ? "mean_squared_difference" : "sum_squared_difference";
  if (request.threads < 0) throw sqdiff::Error("--threads must be 0 (library default) or more");
  std::optional<Shape> axes;
  if (request.axes) axes = parse_axes(*request.axes);

  const InputPair inputs = open_input_pair(request.a_path, request.b_path, request.dtype, request.broadcast, op);
  const DType input = inputs.a.dtype();
  const DType output = request.out_dtype.empty() ? default_output(input, mean) : parse_output_dtype(request.out_dtype);
  Shape out_shape;
  try {
    out_shape = sqdiff::reduced_shape(inputs.shape, axes, request.keepdims);
  } catch (const sqdiff::Error& e) {
    // Name the op rather than reduced_shape, as the op itself would.
    std::string message = e.what();
    const std::string prefix = "reduced_shape:";
    if (message.rfind(prefix, 0) == 0) message = op + ":" + message.substr(prefix.size());
    throw sqdiff::Error(message);
  }

  // The inputs' views keep their own shapes: the library broadcasts them.
  ReduceOptions options;
  options.broadcast = request.broadcast;
  options.axes = axes;
  options.keepdims = request.keepdims;
  options.threads = request.threads;
  const int64_t out_bytes = byte_count(out_shape, dtype_size(output)).value_or(0);
  NpyWriter writer(request.out_path, output, out_shape);
  const TensorView out{writer.region(0, out_bytes), output, out_shape, dense_strides(out_shape)};
  if (mean) {
    sqdiff::mean_squared_difference(inputs.a.view(), inputs.b.view(), out, options);
  } else {
    sqdiff::sum_squared_difference(inputs.a.view(), inputs.b.view(), out, options);
  }
  writer.commit();  // not reached when the library throws: the output is untouched
}

}  // namespace sqdiff::tools
