// Fuzzes the partial-shape parser and partial broadcasting (tools/partial_shape.*).
//
// Input: up to three lines, "SHAPE_A\nSHAPE_B\nMODE" (MODE: "none", "numpy",
// "pdpd" or "pdpd AXIS"; missing lines: only A is parsed, or numpy). Checks:
// - parsing either returns or throws sqdiff::Error (nothing else escapes);
// - a parsed shape formats to text that parses back to the same shape;
// - broadcast_partial_shape agrees with the library on concrete instances: for
//   shapes drawn from the intervals (lower bound, upper bound, a 1 when allowed),
//   whenever sqdiff::broadcast_shape accepts the instances, the partial
//   broadcast succeeded and its result contains the library's shape; for static
//   shapes the two accept exactly the same inputs and give the same shape.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "partial_shape.hpp"
#include "sqdiff/broadcast.hpp"
#include "sqdiff/error.hpp"

using sqdiff::tools::Dim;
using sqdiff::tools::PartialShape;
using sqdiff_fuzz::check;

namespace {

std::string_view next_line(std::string_view& text) {
  const std::size_t nl = text.find('\n');
  const std::string_view line = text.substr(0, nl);
  text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  return line;
}

// Parses, and checks the format/parse round trip. nullopt when the text is refused.
std::optional<PartialShape> parse_and_round_trip(std::string_view text) {
  PartialShape shape;
  try {
    shape = sqdiff::tools::parse_partial_shape(text);
  } catch (const sqdiff::Error&) {
    return std::nullopt;
  }
  const std::string formatted = sqdiff::tools::format_partial_shape(shape);
  PartialShape again;
  try {
    again = sqdiff::tools::parse_partial_shape(formatted);
  } catch (const sqdiff::Error& e) {
    sqdiff_fuzz::fail("\"" + std::string(text) + "\" formats as \"" + formatted + "\", which does not parse: " + e.what());
  }
  check(again == shape, "\"" + std::string(text) + "\" formats as \"" + formatted + "\", which parses differently");
  for (const Dim& d : shape.dims) {
    check(d.lo >= 0 && (d.hi == sqdiff::tools::kUnbounded || d.hi >= d.lo),
          "\"" + std::string(text) + "\" parsed to an invalid interval " + sqdiff::tools::format_dim(d));
  }
  return shape;
}

// A concrete size inside `d`, picked by `choice`.
int64_t instance_of(const Dim& d, unsigned choice) {
  switch (choice % 4) {
    case 0: return d.lo;
    case 1: return d.has_upper_bound() ? d.hi : d.lo < INT64_MAX ? d.lo + 1 : d.lo;
    case 2: return d.contains(1) ? 1 : d.lo;
    default: return d.lo < INT64_MAX && d.contains(d.lo + 1) ? d.lo + 1 : d.lo;
  }
}

sqdiff::Shape instance_of(const PartialShape& s, uint64_t& bits) {
  sqdiff::Shape out;
  for (const Dim& d : s.dims) {
    out.push_back(instance_of(d, static_cast<unsigned>(bits & 3)));
    bits = (bits >> 2) | (bits << 62);
  }
  return out;
}

bool contains(const PartialShape& s, const sqdiff::Shape& shape) {
  if (s.dynamic_rank) return true;
  if (s.dims.size() != shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!s.dims[i].contains(shape[i])) return false;
  }
  return true;
}

std::optional<sqdiff::Broadcast> parse_mode(std::string_view text) {
  if (text.empty() || text == "numpy") return sqdiff::Broadcast{sqdiff::BroadcastKind::numpy, -1};
  if (text == "none") return sqdiff::Broadcast{sqdiff::BroadcastKind::none, -1};
  if (text.substr(0, 4) != "pdpd") return std::nullopt;
  if (text.size() == 4) return sqdiff::Broadcast{sqdiff::BroadcastKind::pdpd, -1};
  try {
    return sqdiff::Broadcast{sqdiff::BroadcastKind::pdpd, std::stoll(std::string(text.substr(4)))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t bits = 0x9E3779B97F4A7C15ull;
  for (const char c : text) bits = (bits ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;

  const std::string_view line_a = next_line(text);
  const auto a = parse_and_round_trip(line_a);
  if (text.empty()) return 0;
  const std::string_view line_b = next_line(text);
  const auto b = parse_and_round_trip(line_b);
  const auto mode = parse_mode(next_line(text));
  if (!a || !b || !mode) return 0;
  if (a->dims.size() > 16 || b->dims.size() > 16) return 0;

  std::optional<PartialShape> partial;
  std::string partial_error;
  try {
    partial = sqdiff::tools::broadcast_partial_shape("fuzz", *a, *b, *mode);
  } catch (const sqdiff::Error& e) {
    partial_error = e.what();
  }
  if (a->dynamic_rank || b->dynamic_rank) return 0;

  const std::string context = "a " + sqdiff::tools::format_partial_shape(*a) + ", b " +
                              sqdiff::tools::format_partial_shape(*b) + " " + sqdiff::tools::format_broadcast(*mode);
  for (int round = 0; round < 4; ++round) {
    const sqdiff::Shape x = instance_of(*a, bits);
    const sqdiff::Shape y = instance_of(*b, bits);
    std::optional<sqdiff::Shape> exact;
    try {
      exact = sqdiff::broadcast_shape(x, y, *mode);
    } catch (const sqdiff::Error&) {
    }
    const std::string instance = context + ", instance a " +
                                 sqdiff::tools::format_partial_shape(PartialShape::from_shape(x)) + " b " +
                                 sqdiff::tools::format_partial_shape(PartialShape::from_shape(y));
    if (exact) {
      check(partial.has_value(), instance + ": the library broadcasts the instance to " +
                                     sqdiff::tools::format_partial_shape(PartialShape::from_shape(*exact)) +
                                     " but the partial broadcast fails: " + partial_error);
      check(contains(*partial, *exact), instance + ": the partial result " + sqdiff::tools::format_partial_shape(*partial) +
                                            " does not contain the library's " +
                                            sqdiff::tools::format_partial_shape(PartialShape::from_shape(*exact)));
    }
    if (a->is_static() && b->is_static()) {
      check(exact.has_value() == partial.has_value(),
            instance + ": static shapes, but the library " + (exact ? "accepts" : "refuses") + " them and the partial broadcast " +
                (partial ? "accepts" : "refuses: " + partial_error));
      if (exact) check(partial->to_shape() == *exact, instance + ": static results differ");
      break;
    }
  }
  return 0;
}
