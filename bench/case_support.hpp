// What the case files share: names of sizes and shapes, the library and peer
// contenders, and the one-iteration benchmark body around measure() and report().
#pragma once

#include <benchmark/benchmark.h>
#include <sqdiff/tensor_view.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bound_loops.hpp"
#include "measure.hpp"

namespace sqdiff_bench {

inline constexpr int64_t kKi = 1024;
inline constexpr int64_t kMi = 1024 * 1024;

int64_t element_count(const sqdiff::Shape& shape);
std::string size_name(int64_t n);             // "4K", "64M", "1680"
std::string shape_name(const sqdiff::Shape& shape);  // "8x1x6x1", "scalar"

// sqdiff or a peer library: with a pool (threads other than 1, and 0 is the
// library default) it is quiesced and primed like the bound loops' worker.
Contender library_contender(std::string name, Role role, std::function<void()> call, int threads);

// A 2-thread loop of the bench's own pair runner: its worker is woken before and
// parked after each sample, and it is quiesced and primed like the library
// (the untimed calls also leave each half of the data in the cache of the core
// that works on it, as the pools of sqdiff and the peers find theirs). Nothing
// for 1 thread.
void pool_like(Contender& contender, int threads);

// A bound loop over `stream_bytes` bytes of each of its buffers, scaled to
// `case_bytes`.
Contender bound_loop(LoopKind kind, const std::byte* a, const std::byte* b, std::byte* c, std::size_t stream_bytes,
                     int threads, double case_bytes);

// The contenders and, when there is a subject, the subject again under the
// name "self", timed in the same shuffled rounds: its time over the subject's
// (r_self) is how far two runs of the same code differ in this case, the
// noise band that a peer's ratio is read against.
std::vector<Contender> with_self(const std::vector<Contender>& contenders);

// The benchmark body: one interleaved measurement of with_self(contenders),
// reported.
void run_and_report(benchmark::State& state, const std::vector<Contender>& contenders, const CaseInfo& info);

// One iteration = the whole interleaved measurement; the time reported is the
// subject's median time per call.
benchmark::internal::Benchmark* configure(benchmark::internal::Benchmark* bm, benchmark::TimeUnit unit);

}  // namespace sqdiff_bench
