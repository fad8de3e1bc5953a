#include "tensor_comparison.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "chunk_plan.hpp"
#include "chunk_squares.hpp"
#include "dtype_kind.hpp"
#include "kernels/reduce_table.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools {
namespace {

// The range of an integer type, max - min, as PSNR's default peak (255 for u8 and i8).
double integer_range(DType dtype) { return std::ldexp(1.0, 8 * static_cast<int>(dtype_size(dtype))) - 1.0; }

const std::byte* element(const void* base, int64_t offset, std::size_t item) {
  return static_cast<const std::byte*>(base) + offset * static_cast<int64_t>(item);
}

Shape tail(const Shape& shape, std::size_t from) { return Shape(shape.begin() + static_cast<std::ptrdiff_t>(from), shape.end()); }

// One worker's share: partial sums (all pairs, finite pairs) and the
// statistics of its chunks.
struct WorkerTotals {
  std::vector<uint64_t> all;
  std::vector<uint64_t> finite;
  DifferenceStats stats;
};

}  // namespace

void check_compare_options(const CompareOptions& options) {
  if (options.threads < 0) throw sqdiff::Error("compare: threads must be 0 (one per core) or more");
  if (options.peak && !(std::isfinite(*options.peak) && *options.peak > 0)) {
    throw sqdiff::Error("compare: the peak must be a finite number greater than 0");
  }
  if (options.tolerance) {
    const auto bad = [](double v) { return !(std::isfinite(v) && v >= 0); };
    if (bad(options.tolerance->atol)) throw sqdiff::Error("compare: atol must be a finite number, 0 or more");
    if (bad(options.tolerance->rtol)) throw sqdiff::Error("compare: rtol must be a finite number, 0 or more");
  }
  if (options.fail_above && !(*options.fail_above >= 0)) {
    throw sqdiff::Error("compare: fail_above must be a number from 0 to inf");
  }
  if (options.chunk_elements < 1) throw sqdiff::Error("compare: chunk_elements must be 1 or more");
}

TensorComparison compare_tensors(const AlignedPair& pair, const CompareOptions& options,
                                 const std::function<void(const void*, const void*, int64_t)>& on_chunk) {
  check_compare_options(options);
  const DType dtype = pair.dtype;
  const std::size_t item = dtype_size(dtype);
  const Shape& shape = pair.shape;
  int64_t total = 1;
  for (int64_t dim : shape) total *= dim;
  const Tolerance tolerance = options.tolerance.value_or(Tolerance{});

  const ChunkPlan plan(shape, options.chunk_elements);
  const std::size_t d = plan.split_dim();
  const Shape a_tail = tail(pair.a_strides, d), b_tail = tail(pair.b_strides, d);

  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const int64_t workers =
      std::max<int64_t>(1, std::min<int64_t>(options.threads == 0 ? cores : options.threads, plan.chunk_count()));

  // One pass over the chunks: their statistics and sums (`exact`: exact
  // states, else bounded ones), the workers' totals merged into the first.
  const auto run_pass = [&](bool exact, const std::function<void(const void*, const void*, int64_t)>& report) {
    const ChunkSquares prototype(dtype, exact);
    std::vector<WorkerTotals> totals(static_cast<std::size_t>(workers),
                                     WorkerTotals{prototype.empty_total(), prototype.empty_total(), {}});
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr error;
    std::mutex error_mutex;
    const auto work = [&](WorkerTotals& mine) {
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
          DifferenceStats stats;
          detail::SquareSums fused;
          bool summed = false;
          if (!exact && dtype == DType::f32) {
            summed = difference_stats_and_squares(dtype, a, a_tail, b, b_tail, chunk.shape, chunk.first, tolerance,
                                                  stats, fused);
          } else {
            stats = difference_stats(dtype, a, a_tail, b, b_tail, chunk.shape, chunk.first, tolerance);
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
          if (report) report(a, b, chunk.elements);
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
    for (std::size_t w = 1; w < totals.size(); ++w) {
      prototype.combine(totals[0].all, totals[w].all);
      prototype.combine(totals[0].finite, totals[w].finite);
      totals[0].stats.merge(totals[w].stats);
    }
    // The four sums, rounded once; nullopt for those whose bound is undecided.
    const DifferenceStats& merged = totals[0].stats;
    return std::make_pair(merged, std::array<std::optional<double>, 4>{
                                      prototype.finish(totals[0].all, total, false),
                                      prototype.finish(totals[0].all, total, true),
                                      prototype.finish(totals[0].finite, merged.finite_pairs, false),
                                      prototype.finish(totals[0].finite, merged.finite_pairs, true)});
  };
  auto [stats, sums] = run_pass(false, on_chunk);
  if (!std::all_of(sums.begin(), sums.end(), [](const std::optional<double>& s) { return s.has_value(); })) {
    // A sum on (or within the bound of) a rounding boundary of f64: summed
    // again exactly, reading the inputs a second time (rare; no progress
    // reported for it).
    sums = run_pass(true, {}).second;
  }

  TensorComparison result;
  result.dtype = dtype;
  result.a_shape = pair.a_shape;
  result.b_shape = pair.b_shape;
  result.shape = shape;
  result.mode = pair.mode;
  result.broadcasted = pair.a_shape != shape || pair.b_shape != shape;
  result.elements = total;
  result.stats = stats;
  result.sum_of_squares = *sums[0];
  result.mse = *sums[1];
  result.rmse = std::sqrt(result.mse);
  result.finite_sum_of_squares = *sums[2];
  result.finite_mse = *sums[3];
  result.finite_rmse = std::sqrt(result.finite_mse);
  result.peak = options.peak;
  if (!result.peak && is_integer(dtype)) result.peak = integer_range(dtype);
  if (result.peak) {
    result.psnr = result.mse == 0 ? std::numeric_limits<double>::infinity()
                                  : 20 * std::log10(*result.peak) - 10 * std::log10(result.mse);
  }
  result.identical = !result.broadcasted && result.stats.differing == 0;
  result.tolerance = options.tolerance;
  result.fail_above = options.fail_above;
  result.passed = (!options.tolerance || result.stats.out_of_tolerance == 0) &&
                  (!options.fail_above || result.mse <= *options.fail_above);
  return result;
}

bool set_passed(const std::vector<TensorComparison>& tensors, std::size_t missing, std::size_t extra) {
  return missing == 0 && extra == 0 &&
         std::all_of(tensors.begin(), tensors.end(), [](const TensorComparison& t) { return t.passed; });
}

}  // namespace sqdiff::tools
