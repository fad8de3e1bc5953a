// Holds the IEEE defaults for the duration of a call: subnormals kept (no
// flush-to-zero, no denormals-are-zero) and round to nearest even, as SPEC
// section 2 requires even when the caller runs with other settings (e.g. a
// program built with -ffast-math). The caller's settings come back after.
#pragma once

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define SQDIFF_HAVE_MXCSR 1
#else
#define SQDIFF_HAVE_MXCSR 0
#endif

#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

class ScopedIeeeDefaults {
 public:
  // Only the floating-point dtypes read MXCSR: integer kernels do no
  // floating-point arithmetic, and reading it (stmxcsr) took ~6 of the ~23 ns
  // of a 16-element call (perf).
  explicit ScopedIeeeDefaults(DType dtype) {
#if SQDIFF_HAVE_MXCSR
    if (dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 && dtype != DType::f64) return;
    saved_ = _mm_getcsr();
    // Writing MXCSR is slow; write it only when it differs.
    if ((saved_ & kNonDefaultBits) != 0) _mm_setcsr(saved_ & ~kNonDefaultBits);
#else
    (void)dtype;
#endif
  }
  ~ScopedIeeeDefaults() {
#if SQDIFF_HAVE_MXCSR
    if ((saved_ & kNonDefaultBits) != 0) _mm_setcsr(saved_);
#endif
  }
  ScopedIeeeDefaults(const ScopedIeeeDefaults&) = delete;
  ScopedIeeeDefaults& operator=(const ScopedIeeeDefaults&) = delete;

 private:
#if SQDIFF_HAVE_MXCSR
  // Flush-to-zero (bit 15), denormals-are-zero (bit 6), rounding control (bits 13-14).
  static constexpr unsigned kNonDefaultBits = 0x8000u | 0x0040u | 0x6000u;
  unsigned saved_ = 0;
#endif
};

}  // namespace sqdiff::detail
