#include "compare_report.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "path_text.hpp"

namespace sqdiff::tools {
namespace {

bool is_integer(DType dtype) {
  return dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 && dtype != DType::f64;
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

// The multi-index of row-major position `position` in `shape`.
Shape unravel(int64_t position, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = position % shape[i];
    position /= shape[i];
  }
  return index;
}

std::string mode_text(const Broadcast& mode) {
  switch (mode.kind) {
    case BroadcastKind::none: return "none";
    case BroadcastKind::numpy: return "numpy";
    case BroadcastKind::pdpd: return "pdpd";
  }
  return "numpy";
}

std::string json_double(double value) {
  return std::isfinite(value) ? shortest_double(value) : "\"" + shortest_double(value) + "\"";
}

std::string json_shape(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string max_text(const CompareResult& result, bool json) {
  if (is_integer(result.dtype)) return std::to_string(result.stats.max_integer);
  return json ? json_double(result.stats.max_float) : shortest_double(result.stats.max_float);
}

// A path that is not UTF-8 loses bytes in its JSON string (a U+FFFD stands for
// each ill-formed part): the key `key` then gives all its bytes, in hex.
// Absent otherwise, so that reports of UTF-8 paths keep their keys.
std::string lossless_path(const std::string& key, const std::string& path) {
  return is_utf8(path) ? "" : ", \"" + key + "\": \"" + hex_bytes(path) + "\"";
}

}  // namespace

std::string shortest_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  (void)error;  // 64 characters always suffice for a double
  return std::string(text, end);
}

std::string compare_text(const CompareRequest& request, const CompareResult& result) {
  const std::string dtype(dtype_name(result.dtype));
  std::ostringstream out;
  out << "a: " << one_line_text(request.a_path) << " (" << dtype << " " << shape_text(result.a_shape) << ")\n";
  out << "b: " << one_line_text(request.b_path) << " (" << dtype << " " << shape_text(result.b_shape) << ")\n";
  out << "elements: " << result.elements << " (shape " << shape_text(result.shape) << ")\n";
  out << "sum of squares: " << shortest_double(result.sum_of_squares) << "\n";
  out << "MSE: " << shortest_double(result.mse) << "\n";
  out << "RMSE: " << shortest_double(result.rmse) << "\n";
  if (result.psnr) {
    out << "PSNR: " << shortest_double(*result.psnr) << " dB (peak " << shortest_double(*result.peak) << ")\n";
  } else {
    out << "PSNR: n/a (float data: give --peak)\n";
  }
  if (result.stats.max_position >= 0) {
    out << "max |a - b|: " << max_text(result, false) << " at "
        << shape_text(unravel(result.stats.max_position, result.shape)) << "\n";
  } else {
    out << "max |a - b|: n/a (no pair without a NaN)\n";
  }
  out << "differing: " << result.stats.differing << "\n";
  out << "NaN: a " << result.stats.a_nan << ", b " << result.stats.b_nan << "\n";
  out << "inf: a " << result.stats.a_inf << ", b " << result.stats.b_inf << "\n";
  out << "identical: " << (result.identical ? "yes" : "no") << "\n";
  return out.str();
}

std::string compare_json(const CompareRequest& request, const CompareResult& result) {
  const bool has_max = result.stats.max_position >= 0;
  std::ostringstream out;
  out << "{\"a\": " << json_string(request.a_path) << lossless_path("a_bytes", request.a_path)
      << ", \"b\": " << json_string(request.b_path) << lossless_path("b_bytes", request.b_path)
      << ", \"dtype\": \"" << dtype_name(result.dtype) << "\", \"a_shape\": " << json_shape(result.a_shape)
      << ", \"b_shape\": " << json_shape(result.b_shape) << ", \"shape\": " << json_shape(result.shape)
      << ", \"broadcast\": \"" << mode_text(request.broadcast) << "\", \"elements\": " << result.elements
      << ", \"sum_of_squares\": " << json_double(result.sum_of_squares) << ", \"mse\": " << json_double(result.mse)
      << ", \"rmse\": " << json_double(result.rmse)
      << ", \"psnr\": " << (result.psnr ? json_double(*result.psnr) : "null")
      << ", \"peak\": " << (result.peak ? json_double(*result.peak) : "null")
      << ", \"max_abs_diff\": " << (has_max ? max_text(result, true) : "null") << ", \"max_abs_diff_index\": "
      << (has_max ? json_shape(unravel(result.stats.max_position, result.shape)) : "null")
      << ", \"differing\": " << result.stats.differing << ", \"nan\": {\"a\": " << result.stats.a_nan
      << ", \"b\": " << result.stats.b_nan << "}, \"inf\": {\"a\": " << result.stats.a_inf
      << ", \"b\": " << result.stats.b_inf << "}, \"identical\": " << (result.identical ? "true" : "false")
      << "}\n";
  return out.str();
}

}  // namespace sqdiff::tools
