#include "compare_report.hpp"

#include <algorithm>
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

// A position of the compared shape as its multi-index; null for none (-1).
JsonValue json_index(const CompareStats& c, int64_t position) {
  return position < 0 ? JsonValue() : json_shape(c.index_of(position));
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
void add_difference(NumberObject& object, const std::string& key, DType dtype, const LargestDifference& m) {
  if (m.position < 0) {
    object.add(key, nullptr);
  } else if (is_integer(dtype)) {
    object.add(key, m.exact);
  } else {
    object.number(key, m.value);
  }
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

std::string difference_text(DType dtype, const LargestDifference& m) {
  return is_integer(dtype) ? std::to_string(m.exact) : shortest_double(m.value);
}

std::string at_text(const CompareStats& c, int64_t position) {
  return position < 0 ? "" : " (first at " + shape_text(c.index_of(position)) + ")";
}

// Why a comparison failed, for the text report ("" when it passed).
std::string failures(const CompareStats& c) {
  std::string why;
  if (c.tolerance && c.out_of_tolerance > 0) {
    why += std::to_string(c.out_of_tolerance) + " out of tolerance";
  }
  if (c.fail_above && !(c.mse <= *c.fail_above)) {
    why += (why.empty() ? "" : ", ") + std::string("MSE ") + shortest_double(c.mse) + " above " +
           shortest_double(*c.fail_above);
  }
  return why;
}

}  // namespace

bool set_passed(const std::vector<NamedComparison>& tensors, std::size_t missing, std::size_t extra) {
  return missing == 0 && extra == 0 &&
         std::all_of(tensors.begin(), tensors.end(), [](const NamedComparison& t) { return t.comparison.passed; });
}

std::string shortest_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[64];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  (void)error;  // 64 characters always suffice for a double
  return std::string(text, end);
}

JsonObject comparison_fields(const CompareStats& c) {
  NumberObject out;
  out.add("dtype", std::string(dtype_name(c.dtype)));
  out.add("a_shape", json_shape(c.a_shape));
  out.add("b_shape", json_shape(c.b_shape));
  out.add("shape", json_shape(c.shape));
  out.add("broadcast", mode_text(c.broadcast));
  out.add("broadcasted", c.broadcasted);
  out.add("elements", c.elements);
  out.number("sum_of_squares", c.sum_squares);
  out.number("mse", c.mse);
  out.number("rmse", c.rmse);
  out.optional_number("psnr", c.psnr);
  out.optional_number("peak", c.peak);
  add_difference(out, "max_abs_diff", c.dtype, c.largest);
  out.add("max_abs_diff_index", json_index(c, c.largest.position));
  out.add("differing", c.differing);
  out.add("nan", JsonObject{{"a", c.nan_a}, {"b", c.nan_b}});
  out.add("inf", JsonObject{{"a", c.inf_a}, {"b", c.inf_b}});
  out.add("first_nan", JsonObject{{"a", json_index(c, c.first_nan_a)}, {"b", json_index(c, c.first_nan_b)}});
  out.add("first_inf", JsonObject{{"a", json_index(c, c.first_inf_a)}, {"b", json_index(c, c.first_inf_b)}});

  NumberObject finite;
  finite.add("elements", c.finite_elements);
  finite.number("sum_of_squares", c.finite_sum_squares);
  finite.number("mse", c.finite_mse);
  finite.number("rmse", c.finite_rmse);
  add_difference(finite, "max_abs_diff", c.dtype, c.finite_largest);
  finite.add("max_abs_diff_index", json_index(c, c.finite_largest.position));
  out.add("finite", std::move(finite).finish());

  if (c.tolerance) {
    NumberObject tolerance;
    tolerance.number("atol", c.tolerance->atol);
    tolerance.number("rtol", c.tolerance->rtol);
    tolerance.add("equal_nan", c.tolerance->equal_nan);
    tolerance.add("out_of_tolerance", c.out_of_tolerance);
    const bool any = c.out_of_tolerance > 0;
    tolerance.add("worst_index", json_index(c, any ? c.worst.position : -1));
    add_difference(tolerance, "worst_abs_error", c.dtype, any ? c.worst : LargestDifference{});
    if (any) {
      tolerance.number("worst_rel_error", c.worst_rel_error);
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

JsonValue pair_report(const std::string& a_path, const std::string& b_path, const CompareStats& comparison) {
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
  int64_t failed = 0;
  for (const NamedComparison& t : tensors) {
    JsonObject entry;
    add_bytes(entry, "name", t.name);
    for (auto& field : comparison_fields(t.comparison)) entry.push_back(std::move(field));
    entries.emplace_back(std::move(entry));
    failed += t.comparison.passed ? 0 : 1;
  }
  report.emplace_back("tensors", std::move(entries));
  report.emplace_back("missing", name_list(missing));
  report.emplace_back("extra", name_list(extra));
  report.emplace_back("compared", static_cast<int64_t>(tensors.size()));
  report.emplace_back("failed", failed);
  report.emplace_back("passed", set_passed(tensors, missing.size(), extra.size()));
  return report;
}

std::string compare_text(const std::string& a_path, const std::string& b_path, const CompareStats& c) {
  const std::string dtype(dtype_name(c.dtype));
  std::ostringstream out;
  out << "a: " << one_line_text(a_path) << " (" << dtype << " " << shape_text(c.a_shape) << ")\n";
  out << "b: " << one_line_text(b_path) << " (" << dtype << " " << shape_text(c.b_shape) << ")\n";
  out << "elements: " << c.elements << " (shape " << shape_text(c.shape)
      << (c.broadcasted ? ", broadcast " + std::string(mode_text(c.broadcast)) : "") << ")\n";
  out << "sum of squares: " << shortest_double(c.sum_squares) << "\n";
  out << "MSE: " << shortest_double(c.mse) << "\n";
  out << "RMSE: " << shortest_double(c.rmse) << "\n";
  if (c.psnr) {
    out << "PSNR: " << shortest_double(*c.psnr) << " dB (peak " << shortest_double(*c.peak) << ")\n";
  } else {
    out << "PSNR: n/a (float data: give --peak)\n";
  }
  if (c.largest.position >= 0) {
    out << "max |a - b|: " << difference_text(c.dtype, c.largest) << " at "
        << shape_text(c.index_of(c.largest.position)) << "\n";
  } else {
    out << "max |a - b|: n/a (no pair without a NaN)\n";
  }
  out << "differing: " << c.differing << "\n";
  out << "NaN: a " << c.nan_a << at_text(c, c.first_nan_a) << ", b " << c.nan_b << at_text(c, c.first_nan_b) << "\n";
  out << "inf: a " << c.inf_a << at_text(c, c.first_inf_a) << ", b " << c.inf_b << at_text(c, c.first_inf_b) << "\n";
  out << "finite pairs: " << c.finite_elements << ": sum of squares " << shortest_double(c.finite_sum_squares)
      << ", MSE " << shortest_double(c.finite_mse);
  if (c.finite_largest.position >= 0) {
    out << ", max |a - b| " << difference_text(c.dtype, c.finite_largest) << " at "
        << shape_text(c.index_of(c.finite_largest.position));
  }
  out << "\n";
  if (c.tolerance) {
    out << "tolerance: atol " << shortest_double(c.tolerance->atol) << ", rtol " << shortest_double(c.tolerance->rtol)
        << (c.tolerance->equal_nan ? ", equal NaN" : "") << ": " << c.out_of_tolerance << " of " << c.elements
        << " out of tolerance";
    if (c.out_of_tolerance > 0) {
      out << ", worst at " << shape_text(c.index_of(c.worst.position)) << ": |a - b| "
          << difference_text(c.dtype, c.worst) << ", relative " << shortest_double(c.worst_rel_error);
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
  int64_t failed = 0;
  for (const NamedComparison& t : tensors) {
    const CompareStats& c = t.comparison;
    out << one_line_text(t.name) << "\t" << dtype_name(c.dtype) << "\t" << shape_text(c.shape) << "\t"
        << (c.largest.position >= 0 ? difference_text(c.dtype, c.largest) : "n/a") << "\t" << shortest_double(c.mse)
        << "\t" << c.nan_a << "/" << c.nan_b << "\t" << c.inf_a << "/" << c.inf_b << "\t"
        << (c.tolerance ? std::to_string(c.out_of_tolerance) : "-") << "\t"
        << (c.passed ? "pass" : "FAIL (" + failures(c) + ")") << "\n";
    failed += c.passed ? 0 : 1;
  }
  for (const std::string& name : missing) out << "missing in b: " << one_line_text(name) << "\n";
  for (const std::string& name : extra) out << "extra in b: " << one_line_text(name) << "\n";
  const bool passed = set_passed(tensors, missing.size(), extra.size());
  out << "result: " << (passed ? "pass" : "FAIL") << " (" << tensors.size() << " compared, " << failed << " failed, "
      << missing.size() << " missing, " << extra.size() << " extra)\n";
  return out.str();
}

}  // namespace sqdiff::tools
