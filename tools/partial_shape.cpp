#include "partial_shape.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

namespace sqdiff::tools {
namespace {

std::string quoted(std::string_view text) {
  std::string out(1, '"');
  out.append(text);
  out += '"';
  return out;
}

[[noreturn]] void bad_text(std::string_view text, const std::string& reason) {
  throw sqdiff::Error("invalid shape " + quoted(text) + ": " + reason);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A non-negative decimal integer that fits in int64, or nullopt.
std::optional<int64_t> parse_count(std::string_view s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

Dim parse_dim(std::string_view whole, std::string_view item) {
  item = trim(item);
  if (item.empty()) bad_text(whole, "empty dimension");
  if (item == "?" || item == "-1") return Dim::dynamic();
  const std::size_t dots = item.find("..");
  if (dots == std::string_view::npos) {
    const auto n = parse_count(item);
    if (!n) {
      bad_text(whole, "dimension " + quoted(item) +
                          " is not a non-negative integer, \"?\", or an interval \"lo..hi\"");
    }
    return Dim::fixed(*n);
  }
  const std::string_view lo_text = trim(item.substr(0, dots));
  const std::string_view hi_text = trim(item.substr(dots + 2));
  Dim dim;
  if (!lo_text.empty()) {
    const auto lo = parse_count(lo_text);
    if (!lo) bad_text(whole, "interval " + quoted(item) + " has an invalid lower bound");
    dim.lo = *lo;
  }
  if (!hi_text.empty() && hi_text != "?") {
    const auto hi = parse_count(hi_text);
    if (!hi) bad_text(whole, "interval " + quoted(item) + " has an invalid upper bound");
    if (*hi < dim.lo) bad_text(whole, "interval " + quoted(item) + " is empty (upper bound below lower bound)");
    dim.hi = *hi;
  }
  return dim;
}

bool contains_one(const Dim& d) { return d.contains(1); }

Dim hull(const Dim& x, const Dim& y) {
  Dim out;
  out.lo = std::min(x.lo, y.lo);
  out.hi = (x.hi == kUnbounded || y.hi == kUnbounded) ? kUnbounded : std::max(x.hi, y.hi);
  return out;
}

std::optional<Dim> intersect(const Dim& x, const Dim& y) {
  Dim out;
  out.lo = std::max(x.lo, y.lo);
  if (x.hi == kUnbounded) {
    out.hi = y.hi;
  } else if (y.hi == kUnbounded) {
    out.hi = x.hi;
  } else {
    out.hi = std::min(x.hi, y.hi);
  }
  if (out.hi != kUnbounded && out.hi < out.lo) return std::nullopt;
  return out;
}

// The numpy rule for one aligned pair (SPEC section 5).
std::optional<Dim> merge_numpy(const Dim& x, const Dim& y) {
  const bool x1 = contains_one(x);
  const bool y1 = contains_one(y);
  if (x1 && y1) return hull(x, y);
  if (x1) return y;
  if (y1) return x;
  return intersect(x, y);
}

}  // namespace

std::string format_broadcast(const sqdiff::Broadcast& mode) {
  switch (mode.kind) {
    case sqdiff::BroadcastKind::none:
      return "(none)";
    case sqdiff::BroadcastKind::numpy:
      return "(numpy)";
    case sqdiff::BroadcastKind::pdpd:
      return "(pdpd, axis " + std::to_string(mode.axis) + ")";
  }
  return "(unknown mode " + std::to_string(static_cast<int>(mode.kind)) + ")";
}

sqdiff::BroadcastKind parse_broadcast_kind(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none") return sqdiff::BroadcastKind::none;
  if (lower == "numpy") return sqdiff::BroadcastKind::numpy;
  if (lower == "pdpd") return sqdiff::BroadcastKind::pdpd;
  throw sqdiff::Error("unknown broadcast mode \"" + std::string(text) + "\" (expected none, numpy or pdpd)");
}

namespace {

struct Failer {
  std::string_view who;
  const PartialShape& a;
  const PartialShape& b;
  const sqdiff::Broadcast& mode;

  [[noreturn]] void operator()(const std::string& reason) const {
    throw sqdiff::Error(std::string(who) + ": cannot broadcast " + format_partial_shape(a) + " with " +
                        format_partial_shape(b) + " " + format_broadcast(mode) + ": " + reason);
  }
};

std::string mismatch(std::size_t dim, const Dim& x, const Dim& y) {
  return "dimension " + std::to_string(dim) + " is " + format_dim(x) + " vs " + format_dim(y);
}

// Element counts are counted as NumPy and the library count them: the product
// of the non-zero dims must fit in int64, also when a 0 dim makes the shape
// empty ([0,2^62,4] is refused). Every shape the partial shape allows breaks
// that rule when the product of the non-zero lower bounds already overflows:
// a dim that may be 0 is left out, any other is at least its lower bound.
bool lower_bounds_overflow(const PartialShape& shape) {
  if (shape.dynamic_rank) return false;
  int64_t count = 1;
  bool overflow = false;
  for (const Dim& d : shape.dims) {
    if (d.lo == 0) continue;
    overflow = overflow || __builtin_mul_overflow(count, d.lo, &count);
  }
  return overflow;
}

void check_input(const Failer& fail, const PartialShape& s, std::string_view name) {
  for (std::size_t i = 0; i < s.dims.size(); ++i) {
    const Dim& d = s.dims[i];
    if (d.lo < 0 || (d.hi != kUnbounded && d.hi < d.lo)) {
      fail("dimension " + std::to_string(i) + " of " + std::string(name) + " is invalid (" +
           std::to_string(d.lo) + ".." + std::to_string(d.hi) + ")");
    }
  }
  if (lower_bounds_overflow(s)) fail("the element count of " + std::string(name) + " overflows int64");
}

PartialShape broadcast_none(const Failer& fail, const PartialShape& a, const PartialShape& b) {
  if (a.dynamic_rank) return b;
  if (b.dynamic_rank) return a;
  if (a.dims.size() != b.dims.size()) {
    fail("ranks differ, " + std::to_string(a.dims.size()) + " vs " + std::to_string(b.dims.size()));
  }
  PartialShape out;
  for (std::size_t i = 0; i < a.dims.size(); ++i) {
    const auto d = intersect(a.dims[i], b.dims[i]);
    if (!d) fail(mismatch(i, a.dims[i], b.dims[i]));
    out.dims.push_back(*d);
  }
  return out;
}

PartialShape broadcast_numpy(const Failer& fail, const PartialShape& a, const PartialShape& b) {
  if (a.dynamic_rank || b.dynamic_rank) return PartialShape::dynamic();
  const std::size_t rank = std::max(a.dims.size(), b.dims.size());
  const std::size_t pad_a = rank - a.dims.size();
  const std::size_t pad_b = rank - b.dims.size();
  PartialShape out;
  out.dims.resize(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const Dim x = i < pad_a ? Dim::fixed(1) : a.dims[i - pad_a];
    const Dim y = i < pad_b ? Dim::fixed(1) : b.dims[i - pad_b];
    const auto d = merge_numpy(x, y);
    if (!d) fail(mismatch(i, x, y));
    out.dims[i] = *d;
  }
  return out;
}

PartialShape broadcast_pdpd(const Failer& fail, const PartialShape& a, const PartialShape& b,
                            const sqdiff::Broadcast& mode) {
  if (mode.axis < -1) fail("axis " + std::to_string(mode.axis) + " is less than -1");
  if (a.dynamic_rank || b.dynamic_rank) return PartialShape::dynamic();
  const auto rank_a = static_cast<int64_t>(a.dims.size());
  const auto rank_b = static_cast<int64_t>(b.dims.size());
  if (rank_b > rank_a) {
    fail("b has rank " + std::to_string(rank_b) + ", more than rank " + std::to_string(rank_a) + " of a");
  }
  const int64_t axis = mode.axis == -1 ? rank_a - rank_b : mode.axis;
  if (axis > rank_a - rank_b) {
    fail("axis " + std::to_string(axis) + " plus rank " + std::to_string(rank_b) + " of b exceeds rank " +
         std::to_string(rank_a) + " of a");
  }
  PartialShape out = a;
  for (int64_t i = 0; i < rank_b; ++i) {
    const auto ia = static_cast<std::size_t>(axis + i);
    const Dim& x = a.dims[ia];
    const Dim& y = b.dims[static_cast<std::size_t>(i)];
    const auto d = merge_numpy(x, y);
    // Only b broadcasts: a static b dim other than 1 must equal a static a dim.
    const bool static_conflict = x.is_static() && y.is_static() && y.lo != x.lo && y.lo != 1;
    if (!d || static_conflict) {
      fail("dimension " + std::to_string(axis + i) + " of a is " + format_dim(x) + " vs " + format_dim(y) +
           " (dimension " + std::to_string(i) + " of b)");
    }
    out.dims[ia] = *d;
  }
  return out;
}

}  // namespace

bool PartialShape::is_static() const {
  if (dynamic_rank) return false;
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_static(); });
}

sqdiff::Shape PartialShape::to_shape() const {
  if (!is_static()) throw sqdiff::Error("shape " + format_partial_shape(*this) + " is not static");
  sqdiff::Shape shape;
  shape.reserve(dims.size());
  for (const Dim& d : dims) shape.push_back(d.lo);
  return shape;
}

PartialShape PartialShape::from_shape(const sqdiff::Shape& shape) {
  PartialShape out;
  out.dims.reserve(shape.size());
  for (const int64_t n : shape) out.dims.push_back(Dim::fixed(n));
  return out;
}

PartialShape parse_partial_shape(std::string_view text) {
  std::string_view s = trim(text);
  if (!s.empty() && (s.front() == '[' || s.front() == '(')) {
    const char close = s.front() == '[' ? ']' : ')';
    if (s.back() != close) bad_text(text, std::string("missing closing '") + close + "'");
    s = trim(s.substr(1, s.size() - 2));
  }
  if (s.empty()) return PartialShape{};  // rank 0
  if (s == "...") return PartialShape::dynamic();
  PartialShape out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    const std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    // A trailing comma, as in Python's "(3,)", is allowed.
    if (comma != std::string_view::npos || !trim(item).empty() || out.dims.empty()) {
      if (trim(item) == "...") bad_text(text, "\"...\" (dynamic rank) must be the whole shape");
      out.dims.push_back(parse_dim(text, item));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string format_dim(const Dim& dim) {
  if (dim.is_static()) return std::to_string(dim.lo);
  if (dim.hi == kUnbounded) return dim.lo == 0 ? "?" : std::to_string(dim.lo) + "..?";
  return std::to_string(dim.lo) + ".." + std::to_string(dim.hi);
}

std::string format_partial_shape(const PartialShape& shape) {
  if (shape.dynamic_rank) return "[...]";
  std::string out = "[";
  for (std::size_t i = 0; i < shape.dims.size(); ++i) {
    if (i > 0) out += ',';
    out += format_dim(shape.dims[i]);
  }
  return out + "]";
}

PartialShape broadcast_partial_shape(std::string_view who, const PartialShape& a, const PartialShape& b,
                                     sqdiff::Broadcast mode) {
  const Failer fail{who, a, b, mode};
  check_input(fail, a, "a");
  check_input(fail, b, "b");
  PartialShape out;
  switch (mode.kind) {
    case sqdiff::BroadcastKind::none:
      out = broadcast_none(fail, a, b);
      break;
    case sqdiff::BroadcastKind::numpy:
      out = broadcast_numpy(fail, a, b);
      break;
    case sqdiff::BroadcastKind::pdpd:
      out = broadcast_pdpd(fail, a, b, mode);
      break;
    default:
      fail("unknown broadcast mode");
  }
  if (lower_bounds_overflow(out)) {
    fail("the element count of the output " + format_partial_shape(out) + " overflows int64");
  }
  return out;
}

}  // namespace sqdiff::tools
