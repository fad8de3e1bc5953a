// The bound loops of the reductions and gradients (issue 13): the simplest
// loops that move the same bytes as a case, like bound_loops.hpp's, and the
// FMA loop that measures the arithmetic peak the pairwise case is held to.
//
//   read_sum   s += a[i] + b[i] (or s += a[i], one stream): reads what a
//              reduction reads and writes nothing. Integer lanes, four vector
//              accumulators per thread, one scalar per thread at the end.
//   gradient   ga = a + b + g, gb = a - b + g: reads three streams and writes
//              two, as the element-wise gradient does; ordinary or streaming stores.
//   fma        acc = acc * x + y in independent chains: the FMA throughput of
//              this CPU, in f32 or f64 lanes (the pairwise kernel chains f64).
//
// With threads == 2 the range is split in two halves at a 64-byte boundary,
// one per thread of the PairRunner (which must be awake), as run_loop does.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sqdiff_bench {

class PairRunner;

// Sums the 32-bit lanes of `bytes` bytes of a (and of b, unless null); returns
// the sum (so that the loop cannot be dropped).
int64_t run_read_sum(const std::byte* a, const std::byte* b, std::size_t bytes, int threads, PairRunner& runner);

// ga = a + b + g, gb = a - b + g over `bytes` bytes of each buffer (32-bit lanes).
void run_gradient_loop(bool streaming, const std::byte* a, const std::byte* b, const std::byte* g, std::byte* ga,
                       std::byte* gb, std::size_t bytes, int threads, PairRunner& runner);

enum class FmaLanes { f32, f64 };

// Vector FMAs per thread per call of run_fma_loop.
inline constexpr std::size_t kFmaIterations = std::size_t{1} << 16;
inline constexpr std::size_t kFmaChains = 16;

// Lanes of one FMA vector instruction of this build (16 f32 / 8 f64 with AVX-512).
std::size_t fma_lanes(FmaLanes lanes);

// kFmaIterations x kFmaChains vector FMAs on each of `threads` threads;
// returns a value depending on all of them.
double run_fma_loop(FmaLanes lanes, int threads, PairRunner& runner);

}  // namespace sqdiff_bench
