#include <string>

#include "shape/broadcast_rules.hpp"
#include "shape/shape_format.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff {
namespace detail {
namespace {

[[noreturn]] void fail(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b, const Broadcast& mode,
                       const std::string& reason) {
  throw Error(std::string(who) + ": cannot broadcast " + format_shape(a) + " with " +
              format_shape(b) + " " + format_mode(mode) + ": " + reason);
}

// Negative dims and element counts beyond int64 are errors of the pair, so
// they are reported like any other broadcast failure: both shapes and the mode.
void check_input(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b, const Broadcast& mode,
                 std::span<const int64_t> input, std::string_view name) {
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] < 0) {
      fail(who, a, b, mode,
           "dimension " + std::to_string(i) + " of " + std::string(name) + " is negative");
    }
  }
  if (element_count(input) < 0) {
    fail(who, a, b, mode, "the element count of " + std::string(name) + " overflows int64");
  }
}

std::string dimension_mismatch(std::size_t dim, int64_t x, int64_t y) {
  return "dimension " + std::to_string(dim) + " is " + std::to_string(x) + " vs " + std::to_string(y);
}

void broadcast_none(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b, const Broadcast& mode,
                    DimVector& out) {
  if (a.size() != b.size()) {
    fail(who, a, b, mode,
         "ranks differ, " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) fail(who, a, b, mode, dimension_mismatch(i, a[i], b[i]));
  }
  out = DimVector(a);
}

void broadcast_numpy(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b, const Broadcast& mode,
                     DimVector& out) {
  const std::size_t rank = std::max(a.size(), b.size());
  out.resize(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    // Right-align: dims missing on the left count as 1.
    const std::size_t pad_a = rank - a.size();
    const std::size_t pad_b = rank - b.size();
    const int64_t x = i < pad_a ? 1 : a[i - pad_a];
    const int64_t y = i < pad_b ? 1 : b[i - pad_b];
    if (x == y || y == 1) {
      out[i] = x;
    } else if (x == 1) {
      out[i] = y;
    } else {
      fail(who, a, b, mode, dimension_mismatch(i, x, y));
    }
  }
}

void broadcast_pdpd(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b, const Broadcast& mode,
                    DimVector& out) {
  const auto rank_a = static_cast<int64_t>(a.size());
  const auto rank_b = static_cast<int64_t>(b.size());
  if (rank_b > rank_a) {
    fail(who, a, b, mode,
         "b has rank " + std::to_string(rank_b) + ", more than rank " + std::to_string(rank_a) + " of a");
  }
  if (mode.axis < -1) {
    fail(who, a, b, mode, "axis " + std::to_string(mode.axis) + " is less than -1");
  }
  const int64_t axis = mode.axis == -1 ? rank_a - rank_b : mode.axis;
  if (axis > rank_a - rank_b) {
    fail(who, a, b, mode,
         "axis " + std::to_string(axis) + " plus rank " + std::to_string(rank_b) +
             " of b exceeds rank " + std::to_string(rank_a) + " of a");
  }
  for (int64_t i = 0; i < rank_b; ++i) {
    const int64_t x = a[static_cast<std::size_t>(axis + i)];
    const int64_t y = b[static_cast<std::size_t>(i)];
    if (y != x && y != 1) {
      fail(who, a, b, mode,
           "dimension " + std::to_string(axis + i) + " of a is " + std::to_string(x) + " vs " +
               std::to_string(y) + " (dimension " + std::to_string(i) + " of b)");
    }
  }
  out = DimVector(a);
}

}  // namespace

int64_t element_count(std::span<const int64_t> shape) {
  // As NumPy counts: the product of the non-zero dims must fit, also when a 0
  // dim makes the shape empty. Dense strides are products of those dims, so a
  // shape that passes never overflows computing them.
  int64_t nonzero_product = 1;
  bool empty = false;
  for (const int64_t dim : shape) {
    if (dim == 0) {
      empty = true;
    } else if (__builtin_mul_overflow(nonzero_product, dim, &nonzero_product)) {
      return -1;
    }
  }
  return empty ? 0 : nonzero_product;
}

void broadcast_dims(std::string_view who, std::span<const int64_t> a, std::span<const int64_t> b,
                    Broadcast mode, DimVector& out) {
  check_input(who, a, b, mode, a, "a");
  check_input(who, a, b, mode, b, "b");
  switch (mode.kind) {
    case BroadcastKind::none:
      broadcast_none(who, a, b, mode, out);
      break;
    case BroadcastKind::numpy:
      broadcast_numpy(who, a, b, mode, out);
      break;
    case BroadcastKind::pdpd:
      broadcast_pdpd(who, a, b, mode, out);
      break;
    default:
      fail(who, a, b, mode, "unknown broadcast mode");
  }
  if (element_count(out) < 0) {
    fail(who, a, b, mode, "the element count of the output " + format_shape(out) + " overflows int64");
  }
}

}  // namespace detail

Shape broadcast_shape(const Shape& a, const Shape& b, Broadcast mode) {
  detail::DimVector out;
  detail::broadcast_dims("broadcast_shape", a, b, mode, out);
  return out.to_vector();
}

}  // namespace sqdiff
