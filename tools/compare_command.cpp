#include "compare_command.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "chunk_plan.hpp"
#include "cli_checks.hpp"
#include "compare_report.hpp"
#include "input_pair.hpp"
#include "mapped_pages.hpp"
#include "partial_shape.hpp"
#include "progress.hpp"
#include "shape_count.hpp"
#include "sqdiff/partial_sums.hpp"

namespace sqdiff::tools {
namespace {

// Exit status when --fail-above is exceeded (1 and 2 are errors, main.cpp).
constexpr int kExitAboveThreshold = 3;

bool is_integer(DType dtype) { return dtype != DType::f16 && dtype != DType::bf16 && dtype != DType::f32 &&
                                      dtype != DType::f64; }

// The range of an integer type, max - min, as PSNR's default peak (255 for u8 and i8).
double integer_range(DType dtype) {
  return std::ldexp(1.0, 8 * static_cast<int>(dtype_size(dtype))) - 1.0;
}

const std::byte* element(const void* base, int64_t offset, std::size_t item) {
  return static_cast<const std::byte*>(base) + offset * static_cast<int64_t>(item);
}

Shape tail(const Shape& shape, std::size_t from) {
  return Shape(shape.begin() + static_cast<std::ptrdiff_t>(from), shape.end());
}

// One worker's share: an exact partial sum and the statistics of its chunks.
struct WorkerTotals {
  std::vector<uint64_t> partial;
  DifferenceStats stats;
};

}  // namespace

CompareResult compare_npy(const CompareRequest& request) {
  if (request.threads < 0) throw sqdiff::Error("--threads must be 0 (one per core) or more");
  if (request.peak && !(std::isfinite(*request.peak) && *request.peak > 0)) {
    throw sqdiff::Error("--peak must be a finite number greater than 0");
  }
  const InputPair inputs = open_input_pair(request.a_path, request.b_path, request.dtype, request.broadcast, "compare");
  const DType dtype = inputs.a.dtype();
  const std::size_t item = dtype_size(dtype);
  const std::size_t words = partial_sum_words(dtype);
  const Shape& shape = inputs.shape;
  const int64_t total = element_count(shape).value_or(0);

  // An input walked exactly in its own row-major order is read once, front
  // to back: the pages behind each chunk can be let go.
  const Shape dense = dense_strides(shape);
  const auto in_order = [&](const NpyArray& array, const Shape& strides) {
    if (array.element_count() != total) return false;  // broadcast: parts are read more than once
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] > 1 && strides[i] != dense[i]) return false;  // size-1 dims have stride 0 here
    }
    return true;
  };
  const bool release_a = in_order(inputs.a, inputs.a_strides);
  const bool release_b = in_order(inputs.b, inputs.b_strides);

  const ChunkPlan plan(shape, request.chunk_elements);
  const std::size_t d = plan.split_dim();
  const Shape a_tail = tail(inputs.a_strides, d), b_tail = tail(inputs.b_strides, d);
  ReduceOptions reduce;
  reduce.threads = 1;  // the chunks are the parallelism

  // The state of an empty sum, to start each worker's total from.
  std::vector<uint64_t> zero(words);
  partial_sum_squared_difference(ConstTensorView{inputs.a.data(), dtype, {0}, {1}},
                                 ConstTensorView{inputs.b.data(), dtype, {0}, {1}}, zero.data(), reduce);

  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  const int64_t workers =
      std::max<int64_t>(1, std::min<int64_t>(request.threads == 0 ? cores : request.threads, plan.chunk_count()));
  std::vector<WorkerTotals> totals(static_cast<std::size_t>(workers), WorkerTotals{zero, {}});

  ProgressBar progress("sqdiff compare", total * static_cast<int64_t>(item),
                       ProgressBar::wanted(request.quiet, total * static_cast<int64_t>(item)));
  std::mutex progress_mutex;
  int64_t done = 0;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;

  const auto work = [&](WorkerTotals& mine) {
    std::vector<uint64_t> partial(words);
    try {
      for (int64_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < plan.chunk_count();) {
        const Chunk chunk = plan.chunk(k);
        int64_t oa = 0, ob = 0;
        for (std::size_t i = 0; i < shape.size(); ++i) {
          oa += chunk.start[i] * inputs.a_strides[i];
          ob += chunk.start[i] * inputs.b_strides[i];
        }
        const void* a = element(inputs.a.data(), oa, item);
        const void* b = element(inputs.b.data(), ob, item);
        partial_sum_squared_difference(ConstTensorView{a, dtype, chunk.shape, a_tail},
                                       ConstTensorView{b, dtype, chunk.shape, b_tail}, partial.data(), reduce);
        combine_partial_sums(dtype, mine.partial.data(), partial.data(), 1);
        mine.stats.merge(difference_stats(dtype, a, a_tail, b, b_tail, chunk.shape, chunk.first));
        const int64_t bytes = chunk.elements * static_cast<int64_t>(item);
        if (release_a) release_mapped_pages(a, bytes);
        if (release_b) release_mapped_pages(b, bytes);
        const std::lock_guard<std::mutex> lock(progress_mutex);
        done += bytes;
        progress.update(done);
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
  progress.finish();

  CompareResult result;
  result.dtype = dtype;
  result.a_shape = inputs.a.shape();
  result.b_shape = inputs.b.shape();
  result.shape = shape;
  result.elements = total;
  for (std::size_t w = 1; w < totals.size(); ++w) {
    combine_partial_sums(dtype, totals[0].partial.data(), totals[w].partial.data(), 1);
    totals[0].stats.merge(totals[w].stats);
  }
  finish_partial_sums(dtype, totals[0].partial.data(), total, false,
                      TensorView{&result.sum_of_squares, DType::f64, {}, {}});
  finish_partial_sums(dtype, totals[0].partial.data(), total, true, TensorView{&result.mse, DType::f64, {}, {}});
  result.rmse = std::sqrt(result.mse);
  result.stats = totals[0].stats;
  result.peak = request.peak;
  if (!result.peak && is_integer(dtype)) result.peak = integer_range(dtype);
  if (result.peak) {
    result.psnr = result.mse == 0 ? std::numeric_limits<double>::infinity()
                                  : 20 * std::log10(*result.peak) - 10 * std::log10(result.mse);
  }
  result.identical = result.a_shape == result.b_shape && result.stats.differing == 0;
  return result;
}

void register_compare_command(CLI::App& app) {
  auto request = std::make_shared<CompareRequest>();
  auto mode = std::make_shared<std::string>("numpy");
  auto json = std::make_shared<bool>(false);
  auto fail_above = std::make_shared<std::optional<double>>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Report how far apart two .npy arrays are: sum of squares, MSE, RMSE, PSNR, max |a - b|, NaN/inf");
  sub->add_option("a", request->a_path, "First .npy file (a)")->required();
  sub->add_option("b", request->b_path, "Second .npy file (b), of the same dtype")->required();
  sub->add_option("--broadcast", *mode, "Broadcast mode: none, numpy or pdpd")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "numpy", "pdpd"}, CLI::ignore_case));
  sub->add_option("--axis", request->broadcast.axis,
                  "pdpd only: the dim of a where b starts; -1 aligns b right. Write negative values as --axis=-1")
      ->capture_default_str()
      ->check(fits_in<int64_t>());
  sub->add_option("--peak", request->peak,
                  "PSNR's peak signal value, finite and above 0; integer data default to the type's range "
                  "(255 for u8), float data have no PSNR without it")
      ->check(number_in(std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                        "a finite number greater than 0"));
  // An MSE is 0 or more, or NaN: a negative limit would fail every run. inf
  // fails only a NaN MSE.
  sub->add_option("--fail-above", *fail_above,
                  "Exit with status 3 (after the report) when the MSE is above this value (0 or more; inf: "
                  "only a NaN MSE fails) or is NaN")
      ->check(number_in(0, std::numeric_limits<double>::infinity(), "a number from 0 to inf"));
  sub->add_flag("--json", *json, "Print one JSON object instead of text (keys in docs/cli.md)");
  sub->add_option("--dtype", request->dtype,
                  "Read the inputs as this dtype; only bf16 (alias bfloat16) differs from the stored dtype: "
                  "it reads u16 (\"<u2\") files holding bf16 bits")
      ->check(CLI::IsMember(dtype_names()));
  sub->add_option("--threads", request->threads, "Worker threads; 0 = one per core")
      ->capture_default_str()
      ->check(integer_in<int>(0, std::numeric_limits<int>::max()));
  // For the tests: small chunks exercise the chunked path on small arrays.
  sub->add_option("--chunk-elements", request->chunk_elements, "Positions of the broadcast shape per chunk")
      ->group("")
      ->check(integer_in<int64_t>(1, std::numeric_limits<int64_t>::max()));
  sub->add_flag("-q,--quiet", request->quiet, "No progress bar (shown on a terminal for inputs over 64 MiB)");
  sub->footer(
      "Examples:\n"
      "  $ sqdiff compare ref.npy out.npy\n"
      "  $ sqdiff compare ref.npy out.npy --json --peak 1\n"
      "  $ sqdiff compare image_a.npy image_b.npy --fail-above 0.5\n"
      "      u8 images: PSNR uses a peak of 255; exit status 3 when the MSE is above 0.5\n"
      "\n"
      "The inputs are memory-mapped and read once, chunk by chunk: files larger than memory are fine.\n"
      "The sum of squares and the MSE are exact values rounded once to f64 (as sum_squared_difference\n"
      "and mean_squared_difference give them). The exit status is 0 whenever the arrays were\n"
      "compared, whatever their differences, unless --fail-above says otherwise.");
  sub->callback([request, mode, json, fail_above] {
    request->broadcast.kind = parse_broadcast_kind(*mode);
    const CompareResult result = compare_npy(*request);
    std::cout << (*json ? compare_json(*request, result) : compare_text(*request, result)) << std::flush;
    if (*fail_above && !(result.mse <= **fail_above)) throw CLI::RuntimeError(kExitAboveThreshold);
  });
}

}  // namespace sqdiff::tools
