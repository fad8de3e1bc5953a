// The benchmark cases of issue 13 ("Benchmarks"): sums of squared differences
// over the shapes that matter and the element-wise gradient, each measured in
// one body, interleaved round by round (measure.hpp), against
//   - a bound loop reading the same bytes (`s += a[i] + b[i]`, one accumulator
//     per thread; the gradient: reading a, b, g and writing two outputs),
//   - for the pairwise case, which is compute-bound, FMA loops at the CPU's
//     peak in f32 and f64 lanes,
//   - Eigen's `(a - b).squaredNorm()` for the f32 sum over all axes.
#include "reduce_cases.hpp"

#include <sqdiff/sqdiff.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "buffers.hpp"
#include "case_support.hpp"
#include "column_loop.hpp"
#include "eigen_peer.hpp"
#include "measure.hpp"
#include "pair_runner.hpp"
#include "reduce/fast_squares.hpp"  // the library's count of outputs sent down its exact path
#include "reduce_bound_loops.hpp"

namespace sqdiff_bench {
namespace {

using sqdiff::DType;
using sqdiff::Shape;

// Results the compiler must not drop.
std::atomic<int64_t> g_sink_int{0};
std::atomic<double> g_sink_double{0};

// s += a[i] + b[i] over `stream_bytes` bytes of each (b null: one stream),
// scaled to `case_bytes`.
Contender read_sum_bound(const std::byte* a, const std::byte* b, std::size_t stream_bytes, int threads,
                         double case_bytes) {
  Contender contender;
  contender.name = b != nullptr ? "read_sum" : "read_sum_1";
  contender.role = Role::bound;
  contender.call = [=] {
    g_sink_int.fetch_add(run_read_sum(a, b, stream_bytes, threads, pair_runner()), std::memory_order_relaxed);
  };
  pool_like(contender, threads);
  contender.scale = case_bytes / (static_cast<double>(b != nullptr ? 2 : 1) * static_cast<double>(stream_bytes));
  return contender;
}

// The FMA loop, scaled to the case's `terms` (one FMA lane per term): its
// time is then the time of the case's FMAs at the peak.
Contender fma_bound(FmaLanes lanes, int threads, double terms) {
  Contender contender;
  contender.name = lanes == FmaLanes::f32 ? "fma_f32" : "fma_f64";
  contender.role = Role::bound;
  contender.call = [=] { g_sink_double.store(run_fma_loop(lanes, threads, pair_runner()), std::memory_order_relaxed); };
  pool_like(contender, threads);
  const double loop_lanes = static_cast<double>(kFmaIterations * kFmaChains * fma_lanes(lanes)) * threads;
  contender.scale = terms / loop_lanes;
  return contender;
}

// Runs the measurement and adds what the generic report does not know: the
// fraction of outputs the library sent down its exact path during it, and
// for compute-bound cases the GFLOP/s of sqdiff and of each FMA loop.
void run_case(benchmark::State& state, const std::vector<Contender>& given, const CaseInfo& info,
              double flops = 0) {
  // sqdiff timed twice where a peer is timed: the noise band of its ratio.
  const bool has_peer =
      std::any_of(given.begin(), given.end(), [](const Contender& c) { return c.role == Role::peer; });
  const std::vector<Contender> contenders = has_peer ? with_self(given) : given;
  for (auto _ : state) {
    const auto before = sqdiff::detail::fast_square_counts();
    const Measurement m = measure(contenders);
    const auto after = sqdiff::detail::fast_square_counts();
    report(state, contenders, m, info);
    const int64_t rounded = after.rounded - before.rounded;
    const int64_t exact = after.exact - before.exact;
    if (rounded + exact > 0) {
      state.counters["exact_fraction"] = static_cast<double>(exact) / static_cast<double>(rounded + exact);
    }
    if (flops > 0) {
      state.counters["GFLOPs"] = flops / median(m.ns[0]);
      for (std::size_t i = 0; i < contenders.size(); ++i) {
        if (contenders[i].name.rfind("fma_", 0) != 0) continue;
        // Peak GFLOP/s: 2 flops per FMA lane, per ns.
        state.counters["peak_GFLOPs_" + contenders[i].name.substr(4)] =
            2.0 * flops / 3.0 / (median(m.ns[i]) * contenders[i].scale);
      }
    }
  }
}

sqdiff::ReduceOptions reduce_options(std::optional<Shape> axes, int threads) {
  sqdiff::ReduceOptions options;
  options.axes = std::move(axes);
  options.threads = threads;
  return options;
}

// ---- sum over all axes, same shape ------------------------------------------

// f16 and bf16 sum into f32 (their own type overflows at these sizes: the sum
// of 16M squares near 4 is far above 65504), f64 into f64, f32 into f32.
DType sum_output(DType input) { return input == DType::f64 ? DType::f64 : DType::f32; }

void sum_all(benchmark::State& state, DType dtype, int64_t n, int threads, std::optional<double> target) {
  const Buffers& buf = buffers();
  fill_a(dtype, static_cast<std::size_t>(n));
  fill_b(dtype, static_cast<std::size_t>(n));
  const std::size_t bytes = static_cast<std::size_t>(n) * sqdiff::dtype_size(dtype);
  const sqdiff::ConstTensorView a{buf.a, dtype, {n}};
  const sqdiff::ConstTensorView b{buf.b, dtype, {n}};
  const sqdiff::TensorView out{buf.c, sum_output(dtype), {}};
  const sqdiff::ReduceOptions options = reduce_options(std::nullopt, threads);
  const double case_bytes = 2.0 * static_cast<double>(bytes);

  std::vector<Contender> contenders;
  contenders.push_back(library_contender(
      "sqdiff", Role::subject, [=] { sqdiff::sum_squared_difference(a, b, out, options); }, threads));
  contenders.push_back(read_sum_bound(buf.a, buf.b, bytes, threads, case_bytes));
  CaseInfo info;
  if (dtype == DType::f32 && n >= 4 * kMi) {
    const auto* a_f = reinterpret_cast<const float*>(buf.a);
    const auto* b_f = reinterpret_cast<const float*>(buf.b);
    contenders.push_back(library_contender(
        "eigen", Role::peer,
        [=] {
          g_sink_double.store(eigen_peer::squared_norm(a_f, b_f, n, threads), std::memory_order_relaxed);
        },
        threads));
    // What the same expression costs with sqdiff's widening to f64 (r_eigen_f64).
    contenders.push_back(library_contender(
        "eigen_f64", Role::reference,
        [=] {
          g_sink_double.store(eigen_peer::squared_norm_in_double(a_f, b_f, n, threads), std::memory_order_relaxed);
        },
        threads));
    info.peer_note = eigen_peer::squared_norm_note(threads);
  }
  info.bytes = case_bytes;
  info.target = target;
  state.counters["elements"] = static_cast<double>(n);
  state.counters["threads"] = threads;
  run_case(state, contenders, info);
}

// ---- per row, per column, per channel ---------------------------------------

struct AxesCase {
  const char* name;
  Shape a;
  Shape b;
  Shape axes;
};

const std::vector<AxesCase>& axes_cases() {
  static const std::vector<AxesCase> cases = {
      {"rows", {4096, 4096}, {4096, 4096}, {1}},
      {"columns", {4096, 4096}, {4096, 4096}, {0}},
      {"per_channel", {16, 64, 128, 128}, {1, 64, 1, 1}, {0, 2, 3}},
  };
  return cases;
}

void sum_axes(benchmark::State& state, const AxesCase& c, int threads) {
  const Buffers& buf = buffers();
  const DType dtype = DType::f32;
  const int64_t n_a = element_count(c.a);
  const int64_t n_b = element_count(c.b);
  fill_a(dtype, static_cast<std::size_t>(n_a));
  fill_b(dtype, static_cast<std::size_t>(n_b));
  const Shape out_shape = sqdiff::reduced_shape(sqdiff::broadcast_shape(c.a, c.b), c.axes, false);
  const sqdiff::ConstTensorView a{buf.a, dtype, c.a};
  const sqdiff::ConstTensorView b{buf.b, dtype, c.b};
  const sqdiff::TensorView out{buf.c, dtype, out_shape};
  const sqdiff::ReduceOptions options = reduce_options(c.axes, threads);
  // Bytes moved: each input element once, the output once. The bound reads
  // the large inputs (both, or a alone when b is small enough to stay cached).
  const double case_bytes = 4.0 * static_cast<double>(n_a + n_b + element_count(out_shape));
  const bool b_large = n_b == n_a;

  std::vector<Contender> contenders;
  contenders.push_back(library_contender(
      "sqdiff", Role::subject, [=] { sqdiff::sum_squared_difference(a, b, out, options); }, threads));
  contenders.push_back(
      read_sum_bound(buf.a, b_large ? buf.b : nullptr, static_cast<std::size_t>(n_a) * 4, threads, case_bytes));
  // The per-column case on 1 thread: the column reduction's least loop, with
  // its running sums as large as the case's (8 bytes a column) and confined
  // to 8 KiB, timed in the same rounds (r_column_loop, r_column_loop_8k).
  if (threads == 1 && c.axes == Shape{0} && b_large && c.a.size() == 2) {
    const auto rows = static_cast<std::size_t>(c.a[0]);
    const auto columns = static_cast<std::size_t>(c.a[1]);
    constexpr std::size_t kKept8k = 1024;
    static std::vector<double> sums;
    sums.assign(columns, 0.0);
    const auto* a_f = reinterpret_cast<const float*>(buf.a);
    const auto* b_f = reinterpret_cast<const float*>(buf.b);
    for (const std::size_t kept : {columns, kKept8k}) {
      if (columns % kept != 0) continue;
      Contender loop;
      loop.name = kept == columns ? "column_loop" : "column_loop_8k";
      loop.role = Role::reference;
      loop.call = [=] {
        g_sink_double.store(run_column_loop(a_f, b_f, rows, columns, kept, sums.data()), std::memory_order_relaxed);
      };
      contenders.push_back(std::move(loop));
    }
  }
  CaseInfo info;
  info.bytes = case_bytes;
  info.target = 0.90;  // issue 13: per-row, per-column and per-channel at 16M+
  state.counters["elements"] = static_cast<double>(std::max(n_a, n_b));
  state.counters["threads"] = threads;
  run_case(state, contenders, info);
}

// ---- pairwise ---------------------------------------------------------------

// [M,1,K] with [1,N,K] over the last axis, f32 or f64 (the output in the
// input's type): compute-bound (M*N*K terms from (M+N)*K inputs), so held to
// the FMA peak, not to bytes. Issue 23's target, at K >= 64: a quarter of the
// f64 FMA peak (PAIRWISE_FMA_TARGET in scripts/perf_page/pairwise.py, from
// r_fma_f64).
//
// The inputs are their own, not fill_a's and fill_b's: those repeat every 997
// elements, and in f64 they are f32 values, whose squares are exact in f64;
// sums of a few such terms then often land where the error bound straddles a
// rounding boundary, and 0.7% (K = 256) to 45% (K = 3) of the outputs went
// down the exact path, which full-precision data (here uniform in [-1, 1),
// normal samples in the Python benchmark) does not cause.
std::vector<double> pairwise_values(std::size_t count, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double& v : values) v = uniform(generator);
  return values;
}

// `values` in `dtype` (f32: each rounded to nearest), in storage that outlives the case.
std::vector<std::byte> pairwise_input(DType dtype, const std::vector<double>& values) {
  std::vector<std::byte> bytes(values.size() * sqdiff::dtype_size(dtype));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::f32) {
      const auto v = static_cast<float>(values[i]);
      std::memcpy(bytes.data() + i * sizeof v, &v, sizeof v);
    } else {
      std::memcpy(bytes.data() + i * sizeof values[i], &values[i], sizeof values[i]);
    }
  }
  return bytes;
}

void pairwise(benchmark::State& state, DType dtype, int64_t m, int64_t n, int64_t k, int threads) {
  const Buffers& buf = buffers();
  const std::vector<std::byte> x_data = pairwise_input(dtype, pairwise_values(static_cast<std::size_t>(m * k), 1));
  const std::vector<std::byte> y_data = pairwise_input(dtype, pairwise_values(static_cast<std::size_t>(n * k), 2));
  const sqdiff::ConstTensorView x{x_data.data(), dtype, {m, 1, k}};
  const sqdiff::ConstTensorView y{y_data.data(), dtype, {1, n, k}};
  const sqdiff::TensorView out{buf.c, dtype, {m, n}};
  const sqdiff::ReduceOptions options = reduce_options(Shape{2}, threads);
  const double terms = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);

  std::vector<Contender> contenders;
  contenders.push_back(library_contender(
      "sqdiff", Role::subject, [=] { sqdiff::sum_squared_difference(x, y, out, options); }, threads));
  contenders.push_back(fma_bound(FmaLanes::f32, threads, terms));
  contenders.push_back(fma_bound(FmaLanes::f64, threads, terms));
  CaseInfo info;
  state.counters["elements"] = static_cast<double>(m * n);
  state.counters["threads"] = threads;
  state.counters["k"] = static_cast<double>(k);
  // Flops: a subtract, a multiply and an add per term.
  run_case(state, contenders, info, 3.0 * terms);
}

// ---- gradient, same shape ---------------------------------------------------

void gradient_same(benchmark::State& state, int64_t n, int threads) {
  const Buffers& buf = buffers();
  const DType dtype = DType::f32;
  fill_a(dtype, static_cast<std::size_t>(n));
  fill_b(dtype, static_cast<std::size_t>(n));
  const std::byte* g_data = gradient_buffer(dtype, static_cast<std::size_t>(n));
  const std::size_t bytes = static_cast<std::size_t>(n) * 4;
  const sqdiff::ConstTensorView a{buf.a, dtype, {n}};
  const sqdiff::ConstTensorView b{buf.b, dtype, {n}};
  const sqdiff::ConstTensorView g{g_data, dtype, {n}};
  const sqdiff::TensorView grad_a{buf.c, dtype, {n}};
  const sqdiff::TensorView grad_b{buf.d, dtype, {n}};
  sqdiff::Options options;
  options.threads = threads;
  // Read a, b, g; write grad_a, grad_b.
  const double case_bytes = 5.0 * static_cast<double>(bytes);

  std::vector<Contender> contenders;
  contenders.push_back(library_contender(
      "sqdiff", Role::subject, [=] { sqdiff::squared_difference_backward(a, b, g, &grad_a, &grad_b, options); },
      threads));
  for (const bool streaming : {false, true}) {
    Contender loop;
    loop.name = streaming ? "gradient_nt" : "gradient";
    loop.role = Role::bound;
    loop.call = [=] {
      run_gradient_loop(streaming, buf.a, buf.b, g_data, buf.c, buf.d, bytes, threads, pair_runner());
    };
    pool_like(loop, threads);
    contenders.push_back(std::move(loop));
  }
  CaseInfo info;
  info.bytes = case_bytes;
  info.target = 0.90;
  state.counters["elements"] = static_cast<double>(n);
  state.counters["threads"] = threads;
  run_case(state, contenders, info);
}

}  // namespace

void register_reduce_cases() {
  for (const int threads : {1, 2}) {
    const std::string name = "reduce/all/f32/64M/t" + std::to_string(threads);
    configure(benchmark::RegisterBenchmark(name.c_str(), sum_all, DType::f32, 64 * kMi, threads,
                                           threads == 2 ? std::optional<double>(0.95) : std::nullopt),
              benchmark::kMicrosecond);
  }
  for (const DType dtype : {DType::f16, DType::bf16, DType::f64}) {
    for (const int threads : {1, 2}) {
      const std::string name =
          "reduce/all/" + std::string(sqdiff::dtype_name(dtype)) + "/16M/t" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), sum_all, dtype, 16 * kMi, threads,
                                             threads == 2 ? std::optional<double>(0.90) : std::nullopt),
                benchmark::kMicrosecond);
    }
  }
  configure(benchmark::RegisterBenchmark("reduce/all/f32/256K/t1", sum_all, DType::f32, 256 * kKi, 1,
                                         std::optional<double>(0.70)),
            benchmark::kMicrosecond);
  for (const AxesCase& c : axes_cases()) {
    for (const int threads : {1, 2}) {
      const std::string name = "reduce/" + std::string(c.name) + "/" + shape_name(c.a) + "-" + shape_name(c.b) +
                               "/t" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), sum_axes, c, threads), benchmark::kMicrosecond);
    }
  }
  // Pairwise squared distances (issue 23): M = N = 1024, the K of points in
  // 3-D, of small embeddings and of larger ones, f32 and f64.
  for (const DType dtype : {DType::f32, DType::f64}) {
    for (const int64_t k : {3, 16, 64, 256}) {
      for (const int threads : {1, 2}) {
        const std::string name = "reduce/pairwise/" + std::string(sqdiff::dtype_name(dtype)) + "/" +
                                 shape_name({1024, 1, k}) + "-" + shape_name({1, 1024, k}) + "/t" +
                                 std::to_string(threads);
        configure(benchmark::RegisterBenchmark(name.c_str(), pairwise, dtype, 1024, 1024, k, threads),
                  benchmark::kMicrosecond);
      }
    }
  }
  for (const int threads : {1, 2}) {
    const std::string name = "grad/same/f32/64M/t" + std::to_string(threads);
    configure(benchmark::RegisterBenchmark(name.c_str(), gradient_same, 64 * kMi, threads), benchmark::kMicrosecond);
  }
}

}  // namespace sqdiff_bench
