// The benchmark cases of issue 3, item 6. Each benchmark measures, in one
// body and interleaved round by round (see measure.hpp):
//   - sqdiff through its public API,
//   - the bound loops that move the same bytes (plain and streaming stores),
//   - Eigen computing the same thing.
#include "cases.hpp"

#include <sqdiff/sqdiff.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bound_loops.hpp"
#include "buffers.hpp"
#include "call_footprint.hpp"
#include "case_support.hpp"
#include "conversion_floor.hpp"
#include "dense_peers.hpp"
#include "eigen_peer.hpp"
#include "measure.hpp"
#include "pair_runner.hpp"

namespace sqdiff_bench {
namespace {

using sqdiff::DType;
using sqdiff::Shape;

enum class Family { add, copy, fill };

// The plain and streaming loops of one family, over out_bytes per buffer.
// Streaming-store loops write to the bench's spare buffer d, so that the lines
// they evict are not the ones the case's output lives in.
void add_bounds(std::vector<Contender>& contenders, Family family, std::size_t out_bytes, int threads,
                double case_bytes, bool inplace = false) {
  const Buffers& buf = buffers();
  switch (family) {
    case Family::add:
      contenders.push_back(inplace ? bound_loop(LoopKind::add_inplace, buf.a, buf.b, nullptr, out_bytes, threads, case_bytes)
                                   : bound_loop(LoopKind::add, buf.a, buf.b, buf.c, out_bytes, threads, case_bytes));
      contenders.push_back(bound_loop(LoopKind::add_nt, buf.a, buf.b, buf.d, out_bytes, threads, case_bytes));
      break;
    case Family::copy:
      contenders.push_back(bound_loop(LoopKind::copy, buf.a, nullptr, buf.c, out_bytes, threads, case_bytes));
      contenders.push_back(bound_loop(LoopKind::copy_nt, buf.a, nullptr, buf.d, out_bytes, threads, case_bytes));
      break;
    case Family::fill:
      contenders.push_back(bound_loop(LoopKind::fill, nullptr, nullptr, buf.c, out_bytes, threads, case_bytes));
      contenders.push_back(bound_loop(LoopKind::fill_nt, nullptr, nullptr, buf.d, out_bytes, threads, case_bytes));
      break;
  }
}

// ---- same shape ------------------------------------------------------------

void same_shape(benchmark::State& state, eigen_peer::Op op, DType dtype, int64_t n, bool inplace, int threads) {
  const Buffers& buf = buffers();
  const std::size_t bytes = static_cast<std::size_t>(n) * sqdiff::dtype_size(dtype);
  fill_a(dtype, static_cast<std::size_t>(n));
  fill_b(dtype, static_cast<std::size_t>(n));
  std::byte* out_data = inplace ? buf.a : buf.c;
  const sqdiff::ConstTensorView a{buf.a, dtype, {n}};
  const sqdiff::ConstTensorView b{buf.b, dtype, {n}};
  const sqdiff::TensorView out{out_data, dtype, {n}};
  sqdiff::Options options;
  options.threads = threads;
  // Read a, read b, write out: 3 streams. In place, the line written is the
  // line just read, so no write-allocate read is added.
  const double case_bytes = 3.0 * static_cast<double>(bytes);

  std::vector<Contender> contenders;
  contenders.push_back(library_contender(
      "sqdiff", Role::subject,
      op == eigen_peer::Op::squared_difference
          ? std::function<void()>([=] { sqdiff::squared_difference(a, b, out, options); })
          : std::function<void()>([=] { sqdiff::subtract(a, b, out, options); }),
      threads));
  add_bounds(contenders, Family::add, bytes, threads, case_bytes, inplace);
  // In the caches f16 and bf16 are bound by their conversions, not by bytes:
  // the least loop doing them shows how close sqdiff comes (one thread).
  if (threads == 1 && n <= 256 * kKi && has_conversion_floor(dtype)) {
    Contender floor;
    floor.name = std::string(sqdiff::dtype_name(dtype)) + "_floor";
    floor.role = Role::reference;
    const bool squared = op == eigen_peer::Op::squared_difference;
    floor.call = [=] { conversion_floor(dtype, squared, buf.a, buf.b, out_data, static_cast<std::size_t>(n)); };
    contenders.push_back(std::move(floor));
  }
  // Eigen::half arithmetic runs about 40x slower than sqdiff here (see the
  // 4M and 16M rows); at 64M one Eigen call takes over a second, which would
  // triple the run time for a ratio the smaller sizes already show.
  const bool with_peer = !(dtype == DType::f16 && n > 16 * kMi);
  if (with_peer) {
    contenders.push_back(library_contender(
        "eigen", Role::peer, [=] { eigen_peer::same_shape(op, dtype, buf.a, buf.b, out_data, n, threads); },
        threads));
  }
  if (dtype == DType::f32 && n == 4 * kKi && threads == 1) {
    for (Contender& part : call_footprint_contenders(op == eigen_peer::Op::squared_difference, a, b, out)) {
      contenders.push_back(std::move(part));
    }
  }
  if (dtype == DType::f32) {
    add_dense_peers(contenders,
                    op == eigen_peer::Op::squared_difference ? PeerOp::squared_difference : PeerOp::subtract, {n},
                    reinterpret_cast<const float*>(buf.a), {n}, reinterpret_cast<const float*>(buf.b),
                    reinterpret_cast<float*>(out_data), threads);
  }

  CaseInfo info;
  info.bytes = case_bytes;
  info.peer_note = with_peer ? eigen_peer::same_shape_note(threads) : "skipped";
  if (op == eigen_peer::Op::squared_difference) {
    if (dtype == DType::f32 && n == 64 * kMi) info.target = 0.95;
    if ((dtype == DType::f16 || dtype == DType::bf16) && n == 16 * kMi) info.target = 0.90;
  }
  if (n == 4 * kKi && threads == 1) info.target = 0.90;
  state.counters["elements"] = static_cast<double>(n);
  state.counters["threads"] = threads;
  if (inplace) a_was_overwritten();
  run_and_report(state, contenders, info);
}

// ---- broadcasts ------------------------------------------------------------

enum class View { dense, reversed, strided };

struct BroadcastCase {
  const char* name;
  Shape a;
  Shape b;
  View view;      // how a is viewed (reversed and strided: a is 1-D)
  Family family;  // which bound loops
  std::optional<double> target;
};

eigen_peer::Dims pad4(const Shape& shape) {
  eigen_peer::Dims dims{1, 1, 1, 1};
  const std::size_t offset = 4 - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) dims[offset + i] = static_cast<std::ptrdiff_t>(shape[i]);
  return dims;
}

void broadcast(benchmark::State& state, const BroadcastCase& c, int threads) {
  const Buffers& buf = buffers();
  const DType dtype = DType::f32;
  constexpr int64_t kStride = 2;
  const Shape out_shape = sqdiff::broadcast_shape(c.a, c.b);
  const int64_t n_out = element_count(out_shape);
  const int64_t n_b = element_count(c.b);
  // Elements of a's buffer the view covers (the strided view skips every other one).
  const int64_t n_a_span = c.view == View::strided ? (element_count(c.a) - 1) * kStride + 1 : element_count(c.a);
  fill_a(dtype, static_cast<std::size_t>(n_a_span));
  fill_b(dtype, static_cast<std::size_t>(n_b));

  sqdiff::ConstTensorView a{buf.a, dtype, c.a};
  if (c.view == View::reversed) a = {buf.a + (n_a_span - 1) * 4, dtype, c.a, {-1}};
  if (c.view == View::strided) a = {buf.a, dtype, c.a, {kStride}};
  const sqdiff::ConstTensorView b{buf.b, dtype, c.b};
  const sqdiff::TensorView out{buf.c, dtype, out_shape};
  sqdiff::Options options;
  options.threads = threads;

  // Bytes moved: the output once, and every input element once (a strided
  // view reads every line it spans, so its whole span counts); inputs small
  // enough to stay in cache are counted once, however often they are re-read.
  const double case_bytes = 4.0 * static_cast<double>(n_out + n_a_span + n_b);
  const auto out_bytes = static_cast<std::size_t>(n_out) * 4;

  std::vector<Contender> contenders;
  contenders.push_back(
      library_contender("sqdiff", Role::subject, [=] { sqdiff::squared_difference(a, b, out, options); }, threads));
  add_bounds(contenders, c.family, out_bytes, threads, case_bytes);
  const auto* a_f = reinterpret_cast<const float*>(buf.a);
  const auto* b_f = reinterpret_cast<const float*>(buf.b);
  auto* out_f = reinterpret_cast<float*>(buf.c);
  std::function<void()> peer_call;
  switch (c.view) {
    case View::dense:
      peer_call = [=, a_dims = pad4(c.a), b_dims = pad4(c.b), out_dims = pad4(out_shape)] {
        eigen_peer::broadcast(a_f, a_dims, b_f, b_dims, out_f, out_dims, threads);
      };
      break;
    case View::reversed: peer_call = [=] { eigen_peer::reversed(a_f, b_f, out_f, n_out, threads); }; break;
    case View::strided: peer_call = [=] { eigen_peer::strided(a_f, kStride, b_f, out_f, n_out, threads); }; break;
  }
  contenders.push_back(library_contender("eigen", Role::peer, std::move(peer_call), threads));
  if (c.view == View::dense) add_dense_peers(contenders, PeerOp::squared_difference, c.a, a_f, c.b, b_f, out_f, threads);

  CaseInfo info;
  info.bytes = case_bytes;
  info.target = c.target;
  info.peer_note = eigen_peer::tensor_note(threads);
  state.counters["elements"] = static_cast<double>(n_out);
  state.counters["threads"] = threads;
  run_and_report(state, contenders, info);
}

const std::vector<BroadcastCase>& broadcast_cases() {
  static const std::vector<BroadcastCase> cases = {
      // Targets (issue 3): per-channel, row, column, scalar, both-sided at 8M+ outputs: 0.90.
      {"per_channel", {8, 64, 128, 128}, {1, 64, 1, 1}, View::dense, Family::copy, 0.90},
      {"per_channel_sv", {1, 64, 1, 1}, {8, 64, 128, 128}, View::dense, Family::copy, 0.90},
      {"row", {8192, 1024}, {1024}, View::dense, Family::copy, 0.90},
      {"column", {8192, 1024}, {8192, 1}, View::dense, Family::copy, 0.90},
      {"scalar", {8 * kMi}, {}, View::dense, Family::copy, 0.90},
      {"both_sided", {64, 1, 128, 1}, {32, 1, 64}, View::dense, Family::fill, 0.90},
      // No target in the issue: measured and reported.
      {"both_sided_inner64", {16, 1, 128, 1}, {64, 1, 64}, View::dense, Family::fill, std::nullopt},
      // Issue 15's row and column gaps to XNNPACK: 16 MiB out + 16 MiB a, the
      // size of a 32 MiB L3, where plain stores beat streaming ones there.
      {"row", {4096, 1024}, {1024}, View::dense, Family::copy, std::nullopt},
      {"column", {4096, 1024}, {4096, 1}, View::dense, Family::copy, std::nullopt},
      {"tiny_inner", {1, 32, 32, 2}, {4096, 1, 1, 2}, View::dense, Family::fill, std::nullopt},
      {"tiny_inner", {1, 32, 32, 2}, {1024, 1, 1, 2}, View::dense, Family::fill, std::nullopt},
      {"reversed", {8 * kMi}, {8 * kMi}, View::reversed, Family::add, std::nullopt},
      {"strided2", {8 * kMi}, {8 * kMi}, View::strided, Family::add, std::nullopt},
  };
  return cases;
}

// ---- small calls -------------------------------------------------------------

// The specs' example: [8,1,6,1] with [7,1,5] -> [8,7,6,5], f32. The views are
// built once, as a caller that owns its tensors would; the time is the call.
void spec_example(benchmark::State& state, int threads) {
  const Buffers& buf = buffers();
  const DType dtype = DType::f32;
  const Shape a_shape{8, 1, 6, 1};
  const Shape b_shape{7, 1, 5};
  const Shape out_shape = sqdiff::broadcast_shape(a_shape, b_shape);
  fill_a(dtype, 48);
  fill_b(dtype, 35);
  const sqdiff::ConstTensorView a{buf.a, dtype, a_shape};
  const sqdiff::ConstTensorView b{buf.b, dtype, b_shape};
  const sqdiff::TensorView out{buf.c, dtype, out_shape};
  sqdiff::Options options;
  options.threads = threads;

  std::vector<Contender> contenders;
  contenders.push_back(
      library_contender("sqdiff", Role::subject, [=] { sqdiff::squared_difference(a, b, out, options); }, threads));
  // The same call with a's strides spelt out, a different stride on its
  // second dim (of size 1, so never stepped along) each time, cycling through
  // far more keys than a thread remembers (4: RecentCalls in
  // src/call_memo.hpp): the same work, but no call finds its key among its
  // thread's recent calls.
  constexpr int64_t kNewKeys = 16;
  std::vector<sqdiff::ConstTensorView> a_new_keys;
  for (int64_t k = 0; k < kNewKeys; ++k) a_new_keys.push_back({buf.a, dtype, a_shape, {6, 7 + k, 1, 1}});
  Contender new_shapes;
  new_shapes.name = "new_shapes";
  new_shapes.role = Role::reference;
  new_shapes.call = [=, next = std::make_shared<std::size_t>(0)] {
    *next = (*next + 1) % a_new_keys.size();
    sqdiff::squared_difference(a_new_keys[*next], b, out, options);
  };
  contenders.push_back(std::move(new_shapes));
  const auto* a_f = reinterpret_cast<const float*>(buf.a);
  const auto* b_f = reinterpret_cast<const float*>(buf.b);
  auto* out_f = reinterpret_cast<float*>(buf.c);
  contenders.push_back(library_contender(
      "eigen", Role::peer,
      [=, a_dims = pad4(a_shape), b_dims = pad4(b_shape), out_dims = pad4(out_shape)] {
        eigen_peer::broadcast(a_f, a_dims, b_f, b_dims, out_f, out_dims, 1);
      },
      threads));

  // The floor under any implementation: storing the output's bytes, nothing
  // read (a call this small runs on one thread).
  const auto out_bytes = static_cast<std::size_t>(4 * element_count(out_shape));
  add_bounds(contenders, Family::fill, out_bytes, 1, static_cast<double>(out_bytes));

  CaseInfo info;
  info.bytes = 4.0 * static_cast<double>(element_count(out_shape) + 48 + 35);
  info.target_ns = 100;
  info.peer_note = eigen_peer::tensor_note(1);
  state.counters["elements"] = static_cast<double>(element_count(out_shape));
  state.counters["threads"] = threads;
  run_and_report(state, contenders, info);
}

}  // namespace

void register_cases() {
  using eigen_peer::Op;
  const std::vector<int64_t> sizes = {4 * kKi, 256 * kKi, 4 * kMi, 16 * kMi, 64 * kMi};
  for (const DType dtype : {DType::f32, DType::f16, DType::bf16, DType::i32}) {
    const bool half = dtype == DType::f16 || dtype == DType::bf16;
    for (const int64_t n : sizes) {
      if (n == 16 * kMi && !half) continue;  // 16M: the f16/bf16 target size
      for (const bool inplace : {false, true}) {
        for (const int threads : {1, 2}) {
          const std::string name = "same/sqdiff/" + std::string(sqdiff::dtype_name(dtype)) + "/" + size_name(n) +
                                   (inplace ? "/inplace" : "/out") + "/t" + std::to_string(threads);
          configure(benchmark::RegisterBenchmark(name.c_str(), same_shape, Op::squared_difference, dtype, n,
                                                 inplace, threads),
                    n <= 256 * kKi ? benchmark::kNanosecond : benchmark::kMicrosecond);
        }
      }
    }
  }
  // subtract, for comparison with squared_difference at both ends of the size range.
  for (const int64_t n : {4 * kKi, 64 * kMi}) {
    for (const int threads : {1, 2}) {
      const std::string name = "same/subtract/f32/" + size_name(n) + "/out/t" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), same_shape, Op::subtract, DType::f32, n, false, threads),
                n <= 256 * kKi ? benchmark::kNanosecond : benchmark::kMicrosecond);
    }
  }
  for (const BroadcastCase& c : broadcast_cases()) {
    for (const int threads : {1, 2}) {
      const std::string name = "bcast/" + std::string(c.name) + "/" + shape_name(c.a) + "-" + shape_name(c.b) +
                               "/t" + std::to_string(threads);
      configure(benchmark::RegisterBenchmark(name.c_str(), broadcast, c, threads), benchmark::kMicrosecond);
    }
  }
  for (const int threads : {0, 1}) {
    const std::string name = "small/spec_example/8x1x6x1-7x1x5/t" + std::to_string(threads);
    configure(benchmark::RegisterBenchmark(name.c_str(), spec_example, threads), benchmark::kNanosecond);
  }
}

}  // namespace sqdiff_bench
