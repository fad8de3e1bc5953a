#include "compare/compare_pass.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "compare/chunk_squares.hpp"
#include "kernels/reduce_table.hpp"
#include "runtime/fp_environment.hpp"
#include "sqdiff/chunk_plan.hpp"

namespace sqdiff::detail {
namespace {

const std::byte* element(const void* base, int64_t offset, std::size_t item) {
  return static_cast<const std::byte*>(base) + offset * static_cast<int64_t>(item);
}

Shape tail(const Shape& shape, std::size_t from) { return Shape(shape.begin() + static_cast<std::ptrdiff_t>(from), shape.end()); }

}  // namespace

PassTotals empty_totals(DType dtype, bool exact) {
  const ChunkSquares prototype(dtype, exact);
  return {{}, prototype.empty_total(), prototype.empty_total()};
}

void merge_totals(DType dtype, bool exact, PassTotals& into, const PassTotals& from) {
  const ChunkSquares prototype(dtype, exact);
  prototype.combine(into.all, from.all);
  prototype.combine(into.finite, from.finite);
  into.stats.merge(from.stats);
}

RoundedSums round_sums(DType dtype, bool exact, const PassTotals& totals, int64_t elements) {
  const ChunkSquares prototype(dtype, exact);
  const int64_t finite = totals.stats.finite_pairs;
  return {prototype.finish(totals.all, elements, false), prototype.finish(totals.all, elements, true),
          prototype.finish(totals.finite, finite, false), prototype.finish(totals.finite, finite, true)};
}

PassTotals compare_pass(const AlignedPair& pair, const PassSettings& settings) {
  const DType dtype = pair.dtype;
  const std::size_t item = dtype_size(dtype);
  const Shape& shape = pair.shape;
  const bool exact = settings.exact;
  const ChunkPlan plan(shape, settings.chunk_elements);
  const std::size_t d = plan.split_dim();
  const Shape a_tail = tail(pair.a_strides, d), b_tail = tail(pair.b_strides, d);
  const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(settings.threads, plan.chunk_count()));

  // Each worker's share: partial sums and the statistics of its chunks,
  // merged into the first when all are done.
  std::vector<PassTotals> totals(static_cast<std::size_t>(workers), empty_totals(dtype, exact));
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&](PassTotals& mine) {
    // The statistics' tolerance test (f64 arithmetic, integers too) and the
    // fused kernel's sums assume IEEE defaults (no FTZ/DAZ, nearest), whatever
    // the caller's thread set: f64 asks for them for every dtype.
    const ScopedIeeeDefaults ieee(DType::f64);
    try {
      ChunkSquares squares(dtype, exact);
      for (int64_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < plan.chunk_count();) {
        const Chunk chunk = plan.chunk(k);
        int64_t oa = 0, ob = 0;
        for (std::size_t i = 0; i < shape.size(); ++i) {
          oa += chunk.start[i] * pair.a_strides[i];
          ob += chunk.start[i] * pair.b_strides[i];
        }
        const void* a = element(pair.a, oa, item);
        const void* b = element(pair.b, ob, item);
        const int64_t first = settings.first + chunk.first;
        DifferenceStats stats;
        SquareSums fused;
        bool summed = false;
        if (!exact && dtype == DType::f32) {
          summed = difference_stats_and_squares(dtype, a, a_tail, b, b_tail, chunk.shape, first,
                                                settings.tolerance, stats, fused);
        } else {
          stats = difference_stats(dtype, a, a_tail, b, b_tail, chunk.shape, first, settings.tolerance);
        }
        if (summed) {
          // Contiguous float32 pairs, all finite: the statistics' pass
          // summed the squares too, and that sum serves both totals.
          std::vector<uint64_t> chunk_total = squares.empty_total();
          squares.add_fused_squares(chunk_total, fused);
          squares.combine(mine.all, chunk_total);
          squares.combine(mine.finite, chunk_total);
        } else if (stats.finite_pairs == chunk.elements) {
          // Every pair finite (always so for integers): one sum serves both totals.
          std::vector<uint64_t> chunk_total = squares.empty_total();
          squares.add_chunk(chunk_total, a, a_tail, b, b_tail, chunk.shape);
          squares.combine(mine.all, chunk_total);
          squares.combine(mine.finite, chunk_total);
        } else {
          squares.add_chunk(mine.all, a, a_tail, b, b_tail, chunk.shape);
          squares.add_finite_pairs(mine.finite, a, a_tail, b, b_tail, chunk.shape);
        }
        mine.stats.merge(stats);
        if (settings.on_chunk) settings.on_chunk(first, chunk.elements);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> threads;
  for (int64_t w = 1; w < workers; ++w) threads.emplace_back(work, std::ref(totals[static_cast<std::size_t>(w)]));
  work(totals[0]);
  for (std::thread& thread : threads) thread.join();
  if (error) std::rethrow_exception(error);
  for (std::size_t w = 1; w < totals.size(); ++w) merge_totals(dtype, exact, totals[0], totals[w]);
  return std::move(totals[0]);
}

}  // namespace sqdiff::detail
