// sqdiff.compare on arrays and on dicts of arrays: the library's comparison
// (sqdiff/compare.hpp) in the report of `sqdiff compare --json`, written by
// the same code (tools/compare_core.cmake: tools/compare_report.hpp) and
// handed to Python as the same tree of dicts and lists; sqdiff/_compare.py
// wraps it in CompareReport.
#include "compare_bindings.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "binding_common.hpp"
#include "compare_report.hpp"
#include "sqdiff/compare.hpp"

namespace sqdiff_python {
namespace {

using sqdiff::CompareOptions;
using sqdiff::CompareStats;
using sqdiff::tools::JsonValue;
using sqdiff::tools::NamedComparison;

// The tree as Python objects: what json.loads gives for the printed report
// (strings as json_string writes them: ill-formed UTF-8 as U+FFFD).
py::object to_python(const JsonValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return py::none();
        } else if constexpr (std::is_same_v<T, bool>) {
          return py::bool_(v);
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
          return py::int_(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          PyObject* text = PyUnicode_DecodeUTF8(v.data(), static_cast<py::ssize_t>(v.size()), "replace");
          if (text == nullptr) throw py::error_already_set();
          return py::reinterpret_steal<py::object>(text);
        } else if constexpr (std::is_same_v<T, sqdiff::tools::JsonArray>) {
          py::list list;
          for (const JsonValue& item : v) list.append(to_python(item));
          return list;
        } else {
          py::dict dict;
          for (const auto& [key, item] : v) dict[py::str(key)] = to_python(item);
          return dict;
        }
      },
      value.variant());
}

std::optional<double> optional_double(py::handle value) {
  if (value.is_none()) return std::nullopt;
  return value.cast<double>();
}

// The options as the program reads them: a tolerance gate when atol or rtol
// is given (the other one NumPy's allclose default).
CompareOptions parse_options(py::handle atol, py::handle rtol, bool equal_nan, py::handle peak,
                             py::handle fail_above, py::handle threads) {
  CompareOptions options;
  options.atol = optional_double(atol);
  options.rtol = optional_double(rtol);
  if (equal_nan && !options.atol && !options.rtol) {
    fail("compare", "equal_nan applies to the tolerance gate: give atol and/or rtol too");
  }
  options.equal_nan = equal_nan;
  options.peak = optional_double(peak);
  options.fail_above = optional_double(fail_above);
  options.threads = parse_threads("compare", threads);
  sqdiff::check_compare_options(options);
  return options;
}

// `object` as an array the compare core can read: in native byte order and
// aligned, copied when it is not (the core reads elements as the host's own
// types), as the element-wise functions copy such inputs.
py::array readable_array(const char* name, py::handle object) {
  py::array array = as_array("compare", name, object);
  if (!is_addressable(array)) array = native_copy(array);
  return array;
}

CompareStats compare_arrays(const std::string& what, py::handle a_object, py::handle b_object, bool broadcast,
                            CompareOptions options) {
  const py::array a = readable_array("a", a_object);
  const py::array b = readable_array("b", b_object);
  // ml_dtypes.bfloat16 arrays are bf16 (sqdiff_dtype knows them), as `sqdiff compare --dtype bf16` reads
  // bfloat16 files; uint16 stays uint16 (there is no dtype= here to say it holds bfloat16 bits).
  const std::optional<sqdiff::DType> a_type = sqdiff_dtype(a.dtype(), false);
  const std::optional<sqdiff::DType> b_type = sqdiff_dtype(b.dtype(), false);
  if (!a_type || !b_type) {
    fail(what, "unsupported dtype " + numpy_name(!a_type ? a.dtype() : b.dtype()) +
                   " (float16/32/64, ml_dtypes.bfloat16 and 8- to 64-bit integers are supported)");
  }
  if (*a_type != *b_type) {
    fail(what, "mixed dtypes: a is " + numpy_name(a.dtype()) + ", b is " + numpy_name(b.dtype()) +
                   "; inputs must have the same dtype (no promotion)");
  }
  const sqdiff::ConstTensorView a_view{a.data(), *a_type, shape_of(a), element_strides(a)};
  const sqdiff::ConstTensorView b_view{b.data(), *b_type, shape_of(b), element_strides(b)};
  options.broadcast = sqdiff::Broadcast{broadcast ? sqdiff::BroadcastKind::numpy : sqdiff::BroadcastKind::none, -1};
  try {
    // The shapes checked first, for the message that says how to broadcast.
    sqdiff::broadcast_shape(a_view.shape, b_view.shape, options.broadcast);
  } catch (const sqdiff::Error& e) {
    std::string message = e.what();
    const std::string prefix = "broadcast_shape: ";
    if (message.rfind(prefix, 0) == 0) message = message.substr(prefix.size());
    fail(what, message + (broadcast ? "" : "; shapes must match (give broadcast=True to broadcast)"));
  }
  const py::gil_scoped_release without_gil;  // a and b stay referenced by this frame
  return sqdiff::compare(a_view, b_view, options);
}

py::object compare(py::handle a, py::handle b, py::handle atol, py::handle rtol, bool equal_nan, bool broadcast,
                   py::handle peak, py::handle fail_above, py::handle threads) {
  const CompareOptions options = parse_options(atol, rtol, equal_nan, peak, fail_above, threads);
  return to_python(sqdiff::tools::comparison_fields(compare_arrays("compare", a, b, broadcast, options)));
}

std::vector<std::pair<std::string, py::object>> sorted_items(const py::dict& arrays, const char* side) {
  std::vector<std::pair<std::string, py::object>> items;
  for (const auto& [key, value] : arrays) {
    if (!py::isinstance<py::str>(key)) {
      type_error(std::string("compare: the names of ") + side + "'s tensors must be str, not " + type_name(key));
    }
    items.emplace_back(key.cast<std::string>(), py::reinterpret_borrow<py::object>(value));
  }
  std::sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return items;
}

py::object compare_sets(const py::dict& a, const py::dict& b, py::handle atol, py::handle rtol, bool equal_nan,
                        bool broadcast, py::handle peak, py::handle fail_above, py::handle threads) {
  const CompareOptions options = parse_options(atol, rtol, equal_nan, peak, fail_above, threads);
  const auto x = sorted_items(a, "a"), y = sorted_items(b, "b");
  std::vector<NamedComparison> tensors;
  std::vector<std::string> missing, extra;
  std::size_t j = 0;
  for (const auto& [name, array] : x) {  // both sorted: one merge, as the program does
    while (j < y.size() && y[j].first < name) extra.push_back(y[j++].first);
    if (j < y.size() && y[j].first == name) {
      tensors.push_back({name, compare_arrays("compare: tensor " + name, array, y[j].second, broadcast, options)});
      ++j;
    } else {
      missing.push_back(name);
    }
  }
  for (; j < y.size(); ++j) extra.push_back(y[j].first);
  return to_python(sqdiff::tools::set_report("", "", tensors, missing, extra));
}

}  // namespace

void define_compare(py::module_& m) {
  m.def("_compare", &compare, py::arg("a"), py::arg("b"), py::arg("atol"), py::arg("rtol"), py::arg("equal_nan"),
        py::arg("broadcast"), py::arg("peak"), py::arg("fail_above"), py::arg("threads"),
        "The fields of sqdiff.compare's report on two arrays; see sqdiff.compare.");
  m.def("_compare_sets", &compare_sets, py::arg("a"), py::arg("b"), py::arg("atol"), py::arg("rtol"),
        py::arg("equal_nan"), py::arg("broadcast"), py::arg("peak"), py::arg("fail_above"), py::arg("threads"),
        "The fields of sqdiff.compare's report on two dicts of arrays; see sqdiff.compare.");
}

}  // namespace sqdiff_python
