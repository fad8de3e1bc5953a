#include "compare_report.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "dtype_kind.hpp"
#include "path_text.hpp"

namespace sqdiff::tools {
namespace {

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(shape[i]);
  }
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

JsonValue json_shape(const Shape& shape) {
  JsonArray dims;
  for (int64_t dim : shape) dims.emplace_back(dim);
  return dims;
}

JsonValue json_index(int64_t position, const Shape& shape) {
  return position < 0 ? JsonValue() : json_shape(unravel(position, shape));
}

// An object under construction whose floats may be NaN or infinite: those
// are written null and named in its "nonfinite" key, added last.
class NumberObject {
 public:
  void add(std::string key, JsonValue value) { fields_.emplace_back(std::move(key), std::move(value)); }
  void number(const std::string& key, double value) {
    if (std::isfinite(value)) {
      add(key, value);
    } else {
      add(key, nullptr);
      nonfinite_.emplace_back(key, shortest_double(value));
    }
  }
  void optional_number(const std::string& key, const std::optional<double>& value) {
    if (value) {
      number(key, *value);
    } else {
      add(key, nullptr);
    }
  }
  JsonObject finish() && {
    fields_.emplace_back("nonfinite", std::move(nonfinite_));
    return std::move(fields_);
  }

 private:
  JsonObject fields_;
  JsonObject nonfinite_;
};

// |a - b| at a maximum: the exact integer, or the f64 value.
void add_difference(NumberObject& object, const std::string& key, DType dtype, const Maximum& m) {
  if (m.position < 0) {
    object.add(key, nullptr);
  } else if (is_integer(dtype)) {
    object.add(key, m.key);
  } else {
    object.number(key, m.as_double());
  }
}

double difference_as_double(DType dtype, const Maximum& m) {
  return is_integer(dtype) ? static_cast<double>(m.key) : m.as_double();
}

// A path or name: the JSON string, and `key`_bytes (all its bytes in hex)
// when the string had to replace ill-formed UTF-8.
void add_bytes(JsonObject& object, const std::string& key, const std::string& bytes) {
  object.emplace_back(key, bytes);
  if (!is_utf8(bytes)) object.emplace_back(key + "_bytes", hex_bytes(bytes));
}

JsonValue name_list(const std::vector<std::string>& names) {
  JsonArray list;
  for (const std::string& name : names) {
    JsonObject entry;
    add_bytes(entry, "name", name);
    list.emplace_back(std::move(entry));
  }
  return list;
}

std::string difference_text(DType dtype, const Maximum& m) {
  return is_integer(dtype) ? std::to_string(m.key) : shortest_double(m.as_double());
}

std::string at_text(int64_t position, const Shape& shape) {
  return position < 0 ? "" : " (first at " + shape_text(unravel(position, shape)) + ")";
}

// Why a comparison failed, for the text report ("" when it passed).
std::string failures(const TensorComparison& c) {
  std::string why;
  if (c.tolerance && c.stats.out_of_tolerance > 0) {
    why += std::to_string(c.stats.out_of_tolerance) + " out of tolerance";
  }
  if (c.fail_above && !(c.mse <= *c.fail_above)) {
    why += (why.empty() ? "" : ", ") + std::string("MSE ") + shortest_double(c.mse) + " above " +
           shortest_double(*c.fail_above);
  }
  return why;
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

JsonObject comparison_fields(const TensorComparison& c) {
  const DifferenceStats& s = c.stats;
  NumberObject out;
  out.add("dtype", std::string(dtype_name(c.dtype)));
  out.add("a_shape", json_shape(c.a_shape));
  out.add("b_shape", json_shape(c.b_shape));
  out.add("shape", json_shape(c.shape));
  out.add("broadcast", mode_text(c.mode));
  out.add("broadcasted", c.broadcasted);
  out.add("elements", c.elements);
  out.number("sum_of_squares", c.sum_of_squares);
  out.number("mse", c.mse);
  out.number("rmse", c.rmse);
  out.optional_number("psnr", c.psnr);
  out.optional_number("peak", c.peak);
  add_difference(out, "max_abs_diff", c.dtype, s.max_abs);
  out.add("max_abs_diff_index", json_index(s.max_abs.position, c.shape));
  out.add("differing", s.differing);
  out.add("nan", JsonObject{{"a", s.a_nan}, {"b", s.b_nan}});
  out.add("inf", JsonObject{{"a", s.a_inf}, {"b", s.b_inf}});
  out.add("first_nan", JsonObject{{"a", json_index(s.a_first_nan, c.shape)}, {"b", json_index(s.b_first_nan, c.shape)}});
  out.add("first_inf", JsonObject{{"a", json_index(s.a_first_inf, c.shape)}, {"b", json_index(s.b_first_inf, c.shape)}});

  NumberObject finite;
  finite.add("elements", s.finite_pairs);
  finite.number("sum_of_squares", c.finite_sum_of_squares);
  finite.number("mse", c.finite_mse);
  finite.number("rmse", c.finite_rmse);
  add_difference(finite, "max_abs_diff", c.dtype, s.finite_max_abs);
  finite.add("max_abs_diff_index", json_index(s.finite_max_abs.position, c.shape));
  out.add("finite", std::move(finite).finish());

  if (c.tolerance) {
    NumberObject tolerance;
    tolerance.number("atol", c.tolerance->atol);
    tolerance.number("rtol", c.tolerance->rtol);
    tolerance.add("equal_nan", c.tolerance->equal_nan);
    tolerance.add("out_of_tolerance", s.out_of_tolerance);
    const bool any = s.out_of_tolerance > 0;
    tolerance.add("worst_index", json_index(any ? s.worst.position : -1, c.shape));
    add_difference(tolerance, "worst_abs_error", c.dtype, any ? s.worst : Maximum{});
    if (any) {
      tolerance.number("worst_rel_error", difference_as_double(c.dtype, s.worst) / s.worst.b_magnitude);
    } else {
      tolerance.add("worst_rel_error", nullptr);
    }
    out.add("tolerance", std::move(tolerance).finish());
  } else {
    out.add("tolerance", nullptr);
  }
  out.optional_number("fail_above", c.fail_above);
  out.add("identical", c.identical);
  out.add("passed", c.passed);
  return std::move(out).finish();
}

JsonValue pair_report(const std::string& a_path, const std::string& b_path, const TensorComparison& comparison) {
  JsonObject report;
  add_bytes(report, "a", a_path);
  add_bytes(report, "b", b_path);
  for (auto& field : comparison_fields(comparison)) report.push_back(std::move(field));
  return report;
}

JsonValue set_report(const std::string& a_path, const std::string& b_path, const std::vector<NamedComparison>& tensors,
                     const std::vector<std::string>& missing, const std::vector<std::string>& extra) {
  JsonObject report;
  if (!a_path.empty() || !b_path.empty()) {
    add_bytes(report, "a", a_path);
    add_bytes(report, "b", b_path);
  }
  JsonArray entries;
  std::vector<TensorComparison> comparisons;
  int64_t failed = 0;
  for (const NamedComparison& t : tensors) {
    JsonObject entry;
    add_bytes(entry, "name", t.name);
    for (auto& field : comparison_fields(t.comparison)) entry.push_back(std::move(field));
    entries.emplace_back(std::move(entry));
    comparisons.push_back(t.comparison);
    failed += t.comparison.passed ? 0 : 1;
  }
  report.emplace_back("tensors", std::move(entries));
  report.emplace_back("missing", name_list(missing));
  report.emplace_back("extra", name_list(extra));
  report.emplace_back("compared", static_cast<int64_t>(tensors.size()));
  report.emplace_back("failed", failed);
  report.emplace_back("passed", set_passed(comparisons, missing.size(), extra.size()));
  return report;
}

std::string compare_text(const std::string& a_path, const std::string& b_path, const TensorComparison& c) {
  const DifferenceStats& s = c.stats;
  const std::string dtype(dtype_name(c.dtype));
  std::ostringstream out;
  out << "a: " << one_line_text(a_path) << " (" << dtype << " " << shape_text(c.a_shape) << ")\n";
  out << "b: " << one_line_text(b_path) << " (" << dtype << " " << shape_text(c.b_shape) << ")\n";
  out << "elements: " << c.elements << " (shape " << shape_text(c.shape)
      << (c.broadcasted ? ", broadcast " + std::string(mode_text(c.mode)) : "") << ")\n";
  out << "sum of squares: " << shortest_double(c.sum_of_squares) << "\n";
  out << "MSE: " << shortest_double(c.mse) << "\n";
  out << "RMSE: " << shortest_double(c.rmse) << "\n";
  if (c.psnr) {
    out << "PSNR: " << shortest_double(*c.psnr) << " dB (peak " << shortest_double(*c.peak) << ")\n";
  } else {
    out << "PSNR: n/a (float data: give --peak)\n";
  }
  if (s.max_abs.position >= 0) {
    out << "max |a - b|: " << difference_text(c.dtype, s.max_abs) << " at "
        << shape_text(unravel(s.max_abs.position, c.shape)) << "\n";
  } else {
    out << "max |a - b|: n/a (no pair without a NaN)\n";
  }
  out << "differing: " << s.differing << "\n";
  out << "NaN: a " << s.a_nan << at_text(s.a_first_nan, c.shape) << ", b " << s.b_nan
      << at_text(s.b_first_nan, c.shape) << "\n";
  out << "inf: a " << s.a_inf << at_text(s.a_first_inf, c.shape) << ", b " << s.b_inf
      << at_text(s.b_first_inf, c.shape) << "\n";
  out << "finite pairs: " << s.finite_pairs << ": sum of squares " << shortest_double(c.finite_sum_of_squares)
      << ", MSE " << shortest_double(c.finite_mse);
  if (s.finite_max_abs.position >= 0) {
    out << ", max |a - b| " << difference_text(c.dtype, s.finite_max_abs) << " at "
        << shape_text(unravel(s.finite_max_abs.position, c.shape));
  }
  out << "\n";
  if (c.tolerance) {
    out << "tolerance: atol " << shortest_double(c.tolerance->atol) << ", rtol " << shortest_double(c.tolerance->rtol)
        << (c.tolerance->equal_nan ? ", equal NaN" : "") << ": " << s.out_of_tolerance << " of " << c.elements
        << " out of tolerance";
    if (s.out_of_tolerance > 0) {
      out << ", worst at " << shape_text(unravel(s.worst.position, c.shape)) << ": |a - b| "
          << difference_text(c.dtype, s.worst) << ", relative "
          << shortest_double(difference_as_double(c.dtype, s.worst) / s.worst.b_magnitude);
    }
    out << "\n";
  }
  out << "identical: " << (c.identical ? "yes" : "no") << "\n";
  const std::string why = failures(c);
  out << "result: " << (why.empty() ? "pass" : "FAIL (" + why + ")") << "\n";
  return out.str();
}

std::string set_text(const std::string& a_path, const std::string& b_path, const std::vector<NamedComparison>& tensors,
                     const std::vector<std::string>& missing, const std::vector<std::string>& extra) {
  std::ostringstream out;
  out << "a: " << one_line_text(a_path) << "\n";
  out << "b: " << one_line_text(b_path) << "\n";
  out << "tensor\tdtype\tshape\tmax |a - b|\tMSE\tNaN a/b\tinf a/b\tout of tolerance\tresult\n";
  std::vector<TensorComparison> comparisons;
  int64_t failed = 0;
  for (const NamedComparison& t : tensors) {
    const TensorComparison& c = t.comparison;
    const DifferenceStats& s = c.stats;
    out << one_line_text(t.name) << "\t" << dtype_name(c.dtype) << "\t" << shape_text(c.shape) << "\t"
        << (s.max_abs.position >= 0 ? difference_text(c.dtype, s.max_abs) : "n/a") << "\t" << shortest_double(c.mse)
        << "\t" << s.a_nan << "/" << s.b_nan << "\t" << s.a_inf << "/" << s.b_inf << "\t"
        << (c.tolerance ? std::to_string(s.out_of_tolerance) : "-") << "\t"
        << (c.passed ? "pass" : "FAIL (" + failures(c) + ")") << "\n";
    comparisons.push_back(c);
    failed += c.passed ? 0 : 1;
  }
  for (const std::string& name : missing) out << "missing in b: " << one_line_text(name) << "\n";
  for (const std::string& name : extra) out << "extra in b: " << one_line_text(name) << "\n";
  const bool passed = set_passed(comparisons, missing.size(), extra.size());
  out << "result: " << (passed ? "pass" : "FAIL") << " (" << tensors.size() << " compared, " << failed << " failed, "
      << missing.size() << " missing, " << extra.size() << " extra)\n";
  return out.str();
}

}  // namespace sqdiff::tools
