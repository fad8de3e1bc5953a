// The comparison's entry points (sqdiff/compare.hpp): validate, run a pass,
// assemble the result.
#include "sqdiff/compare.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "compare/compare_call.hpp"
#include "compare/compare_pass.hpp"
#include "compare/compare_result.hpp"
#include "shape/broadcast_rules.hpp"
#include "shape/shape_format.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff {

// The running totals of a streamed comparison: exact partial states, as a
// chunk is not read twice to settle a bounded sum's rounding.
struct Comparison::Totals {
  detail::PassTotals pass;
};

void check_compare_options(const CompareOptions& options) {
  if (options.threads < 0) throw Error("compare: threads must be 0 (the library default) or more");
  const auto bad = [](const std::optional<double>& v) { return v && !(std::isfinite(*v) && *v >= 0); };
  if (bad(options.atol)) throw Error("compare: atol must be a finite number, 0 or more");
  if (bad(options.rtol)) throw Error("compare: rtol must be a finite number, 0 or more");
  if (options.equal_nan && !options.atol && !options.rtol) {
    throw Error("compare: equal_nan applies to the tolerance rule: set atol and/or rtol too");
  }
  if (options.peak && !(std::isfinite(*options.peak) && *options.peak > 0)) {
    throw Error("compare: the peak must be a finite number greater than 0");
  }
  if (options.fail_above && !(*options.fail_above >= 0)) {
    throw Error("compare: fail_above must be a number from 0 to inf");
  }
  if (options.chunk_elements < 1) throw Error("compare: chunk_elements must be 1 or more");
}

CompareStats compare(const ConstTensorView& a, const ConstTensorView& b, const CompareOptions& options) {
  check_compare_options(options);
  const detail::AlignedPair pair = detail::align_compared_views("compare", a, b, options);
  // Bounded sums first (the reductions' fast path); a sum on (or within the
  // bound of) a rounding boundary of f64 is summed again exactly, reading the
  // inputs a second time (rare; no progress reported for it).
  const detail::PassTotals totals = detail::compare_pass(pair, detail::pass_settings(options, false));
  const detail::DifferenceStats& stats = totals.stats;
  const int64_t elements = detail::element_count(pair.shape);
  detail::RoundedSums sums = detail::round_sums(pair.dtype, false, totals, elements);
  if (!sums.decided()) {
    detail::PassSettings exact = detail::pass_settings(options, true);
    exact.on_chunk = nullptr;
    sums = detail::round_sums(pair.dtype, true, detail::compare_pass(pair, exact), elements);
  }
  return detail::compare_stats({pair.dtype, a.shape, b.shape, pair.shape}, stats, sums, options);
}

Comparison::Comparison(DType dtype, const Shape& shape, const CompareOptions& options)
    : dtype_(dtype), shape_(shape), options_(options) {
  check_compare_options(options);
  detail::check_dtype_is_valid("Comparison", dtype);
  if (options.broadcast.kind != BroadcastKind::none) {
    throw Error("Comparison: the chunks of a and b have one shape: the broadcast mode must be none");
  }
  const bool negative = std::any_of(shape.begin(), shape.end(), [](int64_t dim) { return dim < 0; });
  total_ = negative ? -1 : detail::element_count(shape);
  if (total_ < 0) {
    throw Error("Comparison: shape " + detail::format_shape(shape) +
                " has a negative dim or more elements than int64 holds");
  }
  totals_ = std::make_unique<Totals>(Totals{detail::empty_totals(dtype, true)});
}

Comparison::Comparison(const Comparison& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      options_(other.options_),
      total_(other.total_),
      added_(other.added_),
      totals_(std::make_unique<Totals>(*other.totals_)) {}

Comparison& Comparison::operator=(const Comparison& other) {
  if (this != &other) *this = Comparison(other);
  return *this;
}

Comparison::Comparison(Comparison&&) noexcept = default;
Comparison& Comparison::operator=(Comparison&&) noexcept = default;
Comparison::~Comparison() = default;

void Comparison::add(const ConstTensorView& a_chunk, const ConstTensorView& b_chunk) {
  const char* op = "Comparison::add";
  for (const ConstTensorView* chunk : {&a_chunk, &b_chunk}) {
    if (chunk->dtype != dtype_) {
      throw Error(std::string(op) + ": a chunk of " + std::string(dtype_name(chunk->dtype)) +
                  " in a comparison of " + std::string(dtype_name(dtype_)));
    }
  }
  if (a_chunk.shape != b_chunk.shape) {
    throw Error(std::string(op) + ": the chunks' shapes differ: a " + detail::format_shape(a_chunk.shape) + ", b " +
                detail::format_shape(b_chunk.shape));
  }
  CompareOptions strict = options_;
  strict.broadcast = {BroadcastKind::none, -1};
  const detail::AlignedPair pair = detail::align_compared_views(op, a_chunk, b_chunk, strict);
  const int64_t elements = detail::element_count(pair.shape);
  if (elements > total_ - added_) {
    throw Error(std::string(op) + ": a chunk of " + std::to_string(elements) + " elements, but only " +
                std::to_string(total_ - added_) + " of the " + std::to_string(total_) + " of shape " +
                detail::format_shape(shape_) + " are left");
  }
  detail::PassSettings settings = detail::pass_settings(options_, true);
  settings.first = added_;
  const detail::PassTotals chunk = detail::compare_pass(pair, settings);
  // Nothing is merged until the whole chunk is done: an error leaves the
  // comparison as it was.
  detail::merge_totals(dtype_, true, totals_->pass, chunk);
  added_ += elements;
}

CompareStats Comparison::finish() const {
  if (added_ != total_) {
    throw Error("Comparison::finish: " + std::to_string(added_) + " of the " + std::to_string(total_) +
                " elements of shape " + detail::format_shape(shape_) + " were added");
  }
  const detail::RoundedSums sums = detail::round_sums(dtype_, true, totals_->pass, total_);
  return detail::compare_stats({dtype_, shape_, shape_, shape_}, totals_->pass.stats, sums, options_);
}

Shape CompareStats::index_of(int64_t position) const {
  Shape index(shape.size(), 0);
  for (std::size_t i = shape.size(); i-- > 0;) {
    index[i] = position % shape[i];
    position /= shape[i];
  }
  return index;
}

}  // namespace sqdiff
