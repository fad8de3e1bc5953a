// The fast exact forms of the general quantized pipelines (SPEC 9): shifts
// alone where every multiplier is a power of two (kernels/quantized_dyadic-inl.h),
// and elsewhere the decided lanes' constants and error bound
// (kernels/quantized_decided-inl.h proves the bound).
#pragma once

#include <cstdint>

#include "quantized/quant_params.hpp"

namespace sqdiff::detail {

// Switches a prepared general-path call to the dyadic pipeline where it
// applies, or fills in its decided lanes where the bound leaves them useful.
// Other calls are left as they are.
void choose_fast_path(QuantizedCall& call);

// Tests: false keeps every call on LiteRT's integer pipelines as written.
void set_quantized_fast_paths(bool enabled);

// Tests' mutant: the proved bound E multiplied by `scale` (1 in the library).
// A smaller margin than proved must make the exhaustive tests fail.
void set_decided_margin_scale(double scale);

// How many vectors the decided-lane kernels computed since the process
// started, and how many of them went down the exact pipeline.
struct DecidedLaneCounts {
  int64_t vectors = 0;
  int64_t exact_vectors = 0;
};
DecidedLaneCounts decided_lane_counts();

}  // namespace sqdiff::detail
