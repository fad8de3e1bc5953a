#include "compare/compare_call.hpp"

#include <string>

#include "shape/broadcast_rules.hpp"
#include "shape/dim_vector.hpp"
#include "shape/memory_extent.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/threads.hpp"

namespace sqdiff::detail {
namespace {

[[noreturn]] void fail(std::string_view op, const std::string& reason) { throw Error(std::string(op) + ": " + reason); }

// One input's strides over the compared shape, its extent checked when it
// will be read.
Shape aligned_input(std::string_view op, const char* name, const ConstTensorView& view, const DimVector& shape,
                    const Broadcast& mode, bool is_b, bool read) {
  const DimVector own = explicit_strides(op, name, view.shape, view.strides);
  if (read) {
    if (view.data == nullptr) fail(op, std::string("the data pointer of ") + name + " is null, but the call reads it");
    byte_range(op, name, view.data, relative_extent(op, name, view.shape, own, dtype_size(view.dtype)));
  }
  return aligned_strides(shape, view.shape, own, mode, is_b).to_vector();
}

}  // namespace

std::optional<Tolerance> requested_tolerance(const CompareOptions& options) {
  if (!options.atol && !options.rtol) return std::nullopt;
  return Tolerance{options.atol.value_or(kDefaultAtol), options.rtol.value_or(kDefaultRtol), options.equal_nan};
}

AlignedPair align_compared_views(std::string_view op, const ConstTensorView& a, const ConstTensorView& b,
                                 const CompareOptions& options) {
  for (const DType t : {a.dtype, b.dtype}) check_dtype_is_valid(op, t);
  if (a.dtype != b.dtype) {
    fail(op, "input types differ: a is " + std::string(dtype_name(a.dtype)) + ", b is " +
                 std::string(dtype_name(b.dtype)) + " (no implicit conversion)");
  }
  DimVector shape;
  broadcast_dims(op, a.shape, b.shape, options.broadcast, shape);
  const bool read = element_count(shape) > 0;
  AlignedPair pair;
  pair.dtype = a.dtype;
  pair.shape = shape.to_vector();
  pair.a = a.data;
  pair.a_strides = aligned_input(op, "a", a, shape, options.broadcast, false, read);
  pair.b = b.data;
  pair.b_strides = aligned_input(op, "b", b, shape, options.broadcast, true, read);
  return pair;
}

PassSettings pass_settings(const CompareOptions& options, bool exact) {
  PassSettings settings;
  settings.tolerance = requested_tolerance(options).value_or(Tolerance{});
  settings.exact = exact;
  settings.threads = options.threads == 0 ? default_threads() : options.threads;
  settings.chunk_elements = options.chunk_elements;
  settings.on_chunk = options.on_progress;
  return settings;
}

}  // namespace sqdiff::detail
