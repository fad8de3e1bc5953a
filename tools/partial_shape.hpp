// Partial shapes for shape inference on model files (SPEC section 5).
//
// A dimension is an interval [lo, hi] of possible sizes; a static n is {n, n}
// and "?" is {0, kUnbounded}. The rank itself may be unknown (dynamic_rank).
#pragma once
// Compiled into the static library `sqdiff_tools_common` (tools/CMakeLists.txt,
// defined before add_subdirectory(ir)); tools/CMakeLists.txt links it into sqdiff_ir.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sqdiff/broadcast.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools {

inline constexpr int64_t kUnbounded = -1;  // hi of an interval without upper bound

struct Dim {
  int64_t lo = 0;
  int64_t hi = kUnbounded;  // static n is {n, n}; "?" is {0, kUnbounded}
  bool is_static() const { return lo == hi; }
  bool is_dynamic() const { return !is_static(); }
  bool has_upper_bound() const { return hi != kUnbounded; }
  bool contains(int64_t n) const { return n >= lo && (hi == kUnbounded || n <= hi); }
  static Dim fixed(int64_t n) { return Dim{n, n}; }
  static Dim dynamic() { return Dim{}; }
  friend bool operator==(const Dim&, const Dim&) = default;
};

struct PartialShape {
  bool dynamic_rank = false;
  std::vector<Dim> dims;  // empty when dynamic_rank

  bool is_static() const;  // static rank and every dim static
  // The dims of a static shape; throws sqdiff::Error if the shape is not static.
  sqdiff::Shape to_shape() const;
  static PartialShape from_shape(const sqdiff::Shape& shape);
  static PartialShape dynamic() { return PartialShape{true, {}}; }
  friend bool operator==(const PartialShape&, const PartialShape&) = default;
};

// Accepts "8,1,6,1", "[8,1,6,1]", "?,3", "-1,3" (-1 is "?"), "2..7", "1..", "..5",
// "[]" or "" (rank 0), "..." or "[...]" (dynamic rank); spaces are ignored.
// Throws sqdiff::Error naming the text and what is wrong.
PartialShape parse_partial_shape(std::string_view text);

// "[8,7,6,5]", "[?,3]", "[2..7]", "[1..?]", "[...]".
std::string format_partial_shape(const PartialShape& shape);
// "5", "?", "2..7", "1..?".
std::string format_dim(const Dim& dim);

// The output shape of an element-wise op under the SPEC section 5 rules for
// none / numpy / pdpd(axis). Errors: sqdiff::Error whose message names `who`,
// both shapes and the mode, like the library's broadcast_shape errors, e.g.
// "layer 3: cannot broadcast [3,5] with [4,5] (numpy): dimension 0 is 3 vs 4".
PartialShape broadcast_partial_shape(std::string_view who, const PartialShape& a,
                                     const PartialShape& b, sqdiff::Broadcast mode);

// "none", "numpy" or "pdpd" (case-insensitive); throws sqdiff::Error otherwise.
sqdiff::BroadcastKind parse_broadcast_kind(std::string_view text);
// "(none)", "(numpy)" or "(pdpd, axis 1)", as in the library's error messages.
std::string format_broadcast(const sqdiff::Broadcast& mode);

}  // namespace sqdiff::tools
