#include "reduce/gradient_run.hpp"

#include <hwy/cache_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/gradient_table.hpp"
#include "kernels/kernel_table.hpp"
#include "reduce/element_access.hpp"
#include "reduce/exact_reduce.hpp"
#include "reduce/fast_squares.hpp"
#include "reduce/reduce_plan.hpp"
#include "reduce/rounding.hpp"
#include "runtime/cache_info.hpp"
#include "runtime/fp_environment.hpp"
#include "runtime/thread_pool.hpp"
#include "shape/dense_strides.hpp"
#include "sqdiff/threads.hpp"

namespace sqdiff::detail {
namespace {

using Offsets = std::array<int64_t, kMaxOperands>;

constexpr std::size_t kChunk = 4096;            // elements per kernel call
constexpr int64_t kBlockTerms = 4096;           // signed terms per double-double block
constexpr int64_t kMinParallelTerms = int64_t{1} << 16;
constexpr double kUnit = 0x1p-53;

int threads_for(const ReduceCall& call) {
  const int requested = call.threads > 0 ? call.threads : default_threads();
  return call.outputs * std::max<int64_t>(call.count, 1) < kMinParallelTerms ? 1 : requested;
}

// One output's exact value (divided by the call's divisor, a mean's gradient), rounded.
uint64_t exact_bits(const ReduceCall& call, const std::vector<ReduceDim>& summed, const Offsets& base) {
  return *round_exact(exact_output_sum(call, summed, base), call.divisor != 0, call.divisor, call.output);
}

// ---- Element-wise: one term per output --------------------------------------

// Both gradients' calls (either may be absent) over one plan: they share the
// inputs' layout; each has its own output strides.
struct ElementwiseJob {
  const ReduceCall* calls[2];
  std::byte* outs[2];                     // where each writes (the output, or a dense temporary)
  std::vector<int64_t> out_strides[2];    // per plan dim
  ReducePlan plan;                        // all dims kept
  std::vector<ReduceDim> outer;           // plan.dims but the innermost
  int64_t row = 0;                        // innermost size
  int64_t units_per_row = 0;
  DifferenceProductKernel kernel;
  GatherKernel gather;
  std::size_t size = 0;
  bool streaming = false;                 // the kernel stores non-temporally: fence before reading back
};

// A unit's buffers: three packed operands, two staged outputs (chunk_bytes
// each) and the kernel's unsure indices, allocated uninitialised on first use.
class UnitScratch {
 public:
  explicit UnitScratch(std::size_t chunk_bytes) : chunk_bytes_(chunk_bytes) {}
  std::byte* packed() { return made(packed_, 3 * chunk_bytes_); }
  std::byte* staged() { return made(staged_, 2 * chunk_bytes_); }
  uint32_t* unsure() {
    if (!unsure_) unsure_.reset(new uint32_t[kChunk]);
    return unsure_.get();
  }

 private:
  static std::byte* made(std::unique_ptr<std::byte[]>& buffer, std::size_t bytes) {
    if (!buffer) buffer.reset(new std::byte[bytes]);
    return buffer.get();
  }
  std::size_t chunk_bytes_;
  std::unique_ptr<std::byte[]> packed_;
  std::unique_ptr<std::byte[]> staged_;
  std::unique_ptr<uint32_t[]> unsure_;
};

void elementwise_units(void* context, std::size_t begin, std::size_t count) {
  const ElementwiseJob& job = *static_cast<const ElementwiseJob*>(context);
  const ReduceCall& call = job.calls[0] != nullptr ? *job.calls[0] : *job.calls[1];
  const ScopedIeeeDefaults ieee(call.input);
  const ReduceDim& inner = job.plan.dims.back();
  DimWalker walk(job.outer);
  // parallel_for calls this once per unit of kChunk elements: its scratch is
  // neither zeroed nor made before it is needed. (Zeroed vectors of 96 KiB per
  // unit cost a memset and page faults as large as the data's own traffic.)
  UnitScratch scratch(kChunk * job.size);
  const std::vector<ReduceDim> no_dims;
  for (std::size_t unit = begin; unit < begin + count; ++unit) {
    const auto row = static_cast<int64_t>(unit) / job.units_per_row;
    const int64_t first = static_cast<int64_t>(unit) % job.units_per_row * static_cast<int64_t>(kChunk);
    const auto n = static_cast<std::size_t>(std::min<int64_t>(kChunk, job.row - first));
    walk.seek(row);
    // Operand pointers: direct when read along the row, packed otherwise.
    const std::byte* in[3];
    for (int k = 0; k < 3; ++k) {
      const auto sk = static_cast<std::size_t>(k);
      const std::byte* start = call.data[sk] + (walk.offset(k) + first * inner.stride[sk]) * static_cast<int64_t>(job.size);
      if (inner.stride[sk] == 1) {
        in[k] = start;
      } else {
        std::byte* to = scratch.packed() + sk * kChunk * job.size;
        job.gather(start, inner.stride[sk], to, n);
        in[k] = to;
      }
    }
    // Outputs: direct when dense along the row, staged and scattered otherwise.
    std::byte* out[2] = {nullptr, nullptr};
    // The row's output offsets, per call from its own out strides (the walk
    // holds one output's only).
    int64_t out_start[2] = {0, 0};
    {
      int64_t rest = row;
      for (std::size_t d = job.outer.size(); d-- > 0;) {
        const int64_t index = rest % job.outer[d].size;
        rest /= job.outer[d].size;
        for (int k = 0; k < 2; ++k) {
          if (job.calls[k] != nullptr) out_start[k] += index * job.out_strides[k][d];
        }
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (job.calls[k] == nullptr) continue;
      const int64_t stride = job.out_strides[k].back();
      std::byte* start = job.outs[k] + (out_start[k] + first * stride) * static_cast<int64_t>(job.size);
      out[k] = stride == 1 ? start : scratch.staged() + static_cast<std::size_t>(k) * kChunk * job.size;
    }
    const std::size_t unsure_count = job.kernel(in[0], in[1], in[2], out[0], out[1], n, scratch.unsure());
    // The elements the kernel could not round exactly: summed exactly, and
    // stored after its non-temporal stores have been ordered before them.
    if (unsure_count > 0 && job.streaming) hwy::FlushStream();
    for (std::size_t u = 0; u < unsure_count; ++u) {
      const std::size_t i = scratch.unsure()[u];
      const Offsets base = {walk.offset(0) + (first + static_cast<int64_t>(i)) * inner.stride[0],
                            walk.offset(1) + (first + static_cast<int64_t>(i)) * inner.stride[1],
                            walk.offset(2) + (first + static_cast<int64_t>(i)) * inner.stride[2]};
      for (int k = 0; k < 2; ++k) {
        if (out[k] == nullptr) continue;
        // Each sign from its own exact sum: a NaN is the canonical one, not a negated one.
        ReduceCall signed_call = call;
        signed_call.negate = k == 1;
        store_bits(out[k] + i * job.size, call.output, exact_bits(signed_call, no_dims, base));
      }
    }
    // Scatter staged outputs.
    for (int k = 0; k < 2; ++k) {
      if (job.calls[k] == nullptr) continue;
      const int64_t stride = job.out_strides[k].back();
      if (stride == 1) continue;
      std::byte* start = job.outs[k] + (out_start[k] + first * stride) * static_cast<int64_t>(job.size);
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(start + static_cast<int64_t>(i) * stride * static_cast<int64_t>(job.size), out[k] + i * job.size, job.size);
      }
    }
  }
  // Non-temporal stores are ordered before the pool reports this share done.
  if (job.streaming) hwy::FlushStream();
}

// Whether the outputs go out with non-temporal stores: written densely along
// the row straight into the caller's outputs, by a call that moves more than
// the last-level cache holds, so that nothing would read them from the cache
// (as the element-wise ops decide, elementwise/execute.cpp). Plain stores
// first read each output line: 7 lines moved for 5 (a, b, g, two outputs).
bool streams_outputs(const ElementwiseJob& job, const ReduceCall& call) {
  std::size_t bytes = 0;
  for (int k = 0; k < 2; ++k) {
    if (job.calls[k] == nullptr) continue;
    if (job.outs[k] != job.calls[k]->out || job.out_strides[k].back() != 1) return false;
    bytes += static_cast<std::size_t>(job.calls[k]->outputs) * job.size;
  }
  for (std::size_t k = 0; k < 3; ++k) {
    std::size_t elements = 1;
    for (const ReduceDim& dim : job.plan.dims) {
      if (dim.stride[k] != 0) elements *= static_cast<std::size_t>(dim.size);
    }
    if (call.data[k] != nullptr) bytes += elements * job.size;
  }
  return bytes > last_level_cache_bytes();
}

// Runs the element-wise calls among `calls` (those with one term per output
// and the same plan), both in one pass. Returns which it ran.
std::array<bool, 2> run_elementwise_products(const std::array<ReduceCall, 2>& calls) {
  std::array<bool, 2> ran = {false, false};
  const ReduceCall* present[2] = {nullptr, nullptr};
  ReducePlan plans[2];
  for (int k = 0; k < 2; ++k) {
    if (calls[static_cast<std::size_t>(k)].outputs == 0 || calls[static_cast<std::size_t>(k)].count != 1) continue;
    present[k] = &calls[static_cast<std::size_t>(k)];
    plans[k] = make_reduce_plan(*present[k]);
  }
  // Both only when their plans walk the inputs alike.
  if (present[0] != nullptr && present[1] != nullptr) {
    bool same = plans[0].dims.size() == plans[1].dims.size();
    for (std::size_t d = 0; same && d < plans[0].dims.size(); ++d) {
      same = plans[0].dims[d].size == plans[1].dims[d].size && plans[0].dims[d].stride == plans[1].dims[d].stride;
    }
    if (!same) present[1] = nullptr;  // run on its own, below
  }
  for (int pass = 0; pass < 2; ++pass) {
    ElementwiseJob job;
    job.calls[0] = pass == 0 ? present[0] : nullptr;
    job.calls[1] = pass == 0 ? present[1] : (present[1] == nullptr && calls[1].outputs > 0 && calls[1].count == 1 && !ran[1] ? &calls[1] : nullptr);
    if (job.calls[0] == nullptr && job.calls[1] == nullptr) continue;
    const ReduceCall& call = job.calls[0] != nullptr ? *job.calls[0] : *job.calls[1];
    job.plan = job.calls[0] != nullptr ? plans[0] : make_reduce_plan(*job.calls[1]);
    if (job.plan.dims.empty()) {  // one element: a dim of size 1 to walk
      ReduceDim one;
      job.plan.dims.push_back(one);
    }
    job.outer.assign(job.plan.dims.begin(), job.plan.dims.end() - 1);
    job.row = job.plan.dims.back().size;
    job.units_per_row = (job.row + static_cast<int64_t>(kChunk) - 1) / static_cast<int64_t>(kChunk);
    job.size = dtype_size(call.input);
    job.gather = kernel_table().gather.for_size(job.size);
    std::vector<std::byte> temporaries[2];
    for (int k = 0; k < 2; ++k) {
      if (job.calls[k] == nullptr) continue;
      const ReducePlan own = make_reduce_plan(*job.calls[k]);
      const ReducePlan& plan = own.dims.empty() ? job.plan : own;
      job.out_strides[k].clear();
      for (const ReduceDim& d : plan.dims) job.out_strides[k].push_back(d.out_stride);
      job.outs[k] = job.calls[k]->out;
      if (job.calls[k]->out_aliases_input) {
        // As if the inputs were read first: computed into a dense temporary.
        temporaries[k].resize(static_cast<std::size_t>(job.calls[k]->outputs) * job.size);
        job.outs[k] = temporaries[k].data();
        std::vector<int64_t> sizes;
        for (const ReduceDim& d : job.plan.dims) sizes.push_back(d.size);
        const DimVector dense = dense_strides(sizes);
        job.out_strides[k].assign(dense.begin(), dense.end());
      }
    }
    job.streaming = streams_outputs(job, call);
    job.kernel = gradient_kernel_table().for_input(call.input, job.streaming);
    const int threads = threads_for(call);
    int64_t rows = 1;
    for (const ReduceDim& d : job.outer) rows *= d.size;
    parallel_for(threads, static_cast<std::size_t>(rows * job.units_per_row), 1, &elementwise_units, &job);
    for (int k = 0; k < 2; ++k) {
      if (job.calls[k] == nullptr) continue;
      ran[static_cast<std::size_t>(job.calls[k] == &calls[0] ? 0 : 1)] = true;
      if (temporaries[k].empty()) continue;
      // Copy the temporary into the output.
      const ReducePlan own = make_reduce_plan(*job.calls[k]);
      const std::vector<ReduceDim> dims = own.dims;
      DimWalker walk(dims);
      int64_t ordinal = 0;
      do {
        std::memcpy(job.calls[k]->out + walk.out_offset() * static_cast<int64_t>(job.size),
                    temporaries[k].data() + ordinal * static_cast<int64_t>(job.size), job.size);
        ++ordinal;
      } while (walk.next());
    }
  }
  return ran;
}

// ---- Summed: signed terms over broadcast dims --------------------------------

// Below this, a non-zero term is left to the exact path: a product of
// doubles this small may underflow (to 0, or to a subnormal that lost bits,
// so that p + r is no longer the exact term), and the error bound, a multiple
// of the terms' magnitudes, would underflow with it. Terms of f16, bf16 and
// f32 inputs (at least 2^-297 for products, 2^-149 for values) never are.
constexpr double kSmallestBoundedTerm = 0x1p-900;
constexpr double kLargestBoundedTerm = 0x1p1000;

// A term as p + r: its double rounding and the rest, within 2^-103 |p|.
// False for a term the bound does not cover (not finite, or f64 values so
// large or small that the products overflow, underflow or lose bits): then
// the output is summed exactly. p is 0 only for a term that is exactly zero
// (a factor is zero), with IEEE's sign of that zero.
bool term_of(const ReduceCall& call, const std::byte* a, const std::byte* b, const std::byte* g, double& p, double& r) {
  if (call.term == Term::value) {
    p = load_float(g, call.input);
    if (call.negate) p = -p;
    r = 0;
    const double magnitude = std::fabs(p);
    return magnitude == 0 || (magnitude >= kSmallestBoundedTerm && magnitude < kLargestBoundedTerm);
  }
  const double va = load_float(a, call.input);
  const double vb = load_float(b, call.input);
  const double vg = load_float(g, call.input);
  const double s = va - vb;
  const double bv = s - va;
  const double e = (va - (s - bv)) + (-vb - bv);
  const double two_s = s + s;
  p = two_s * vg;
  r = std::fma(two_s, vg, -p) + 2 * e * vg;
  if (call.negate) {
    p = -p;
    r = -r;
  }
  if (!std::isfinite(p) || !std::isfinite(r) || !std::isfinite(two_s)) return false;
  // An exact zero: a - b = s + e is 0 only when s is (a subtraction that
  // rounds to 0 is exact). A product that rounded to 0 is not one.
  if (vg == 0 || s == 0) return true;
  const double magnitude = std::fabs(p);
  return magnitude >= kSmallestBoundedTerm && magnitude < kLargestBoundedTerm;
}

struct SummedJob {
  const ReduceCall* call;
  std::vector<ReduceDim> kept;
  std::vector<ReduceDim> summed;
  uint64_t* results;  // or null: written in place
  bool fast;          // false: every output summed exactly (set_fast_square_reductions)
};

void summed_outputs(void* context, std::size_t begin, std::size_t count) {
  const SummedJob& job = *static_cast<const SummedJob*>(context);
  const ReduceCall& call = *job.call;
  const ScopedIeeeDefaults ieee(call.input);
  const std::size_t size = dtype_size(call.input);
  DimWalker outputs(job.kept);
  DimWalker terms(job.summed);
  outputs.seek(static_cast<int64_t>(begin));
  for (std::size_t o = 0; o < count; ++o) {
    const Offsets base = {outputs.offset(0), outputs.offset(1), outputs.offset(2)};
    double hi = 0, lo = 0, magnitude = 0;
    int64_t blocks = 0;
    bool covered = true;
    bool only_negative_zeros = call.count > 0;
    int64_t in_block = 0;
    double block_hi = 0, block_lo = 0;
    // No terms (a 0 among the summed dims): the sum is +0, and the walk
    // would still visit its first position, reading elements that an
    // empty input does not have. With the fast paths off, the exact path
    // sums every output.
    if (!job.fast) {
      covered = false;
    } else if (call.count > 0) {
      terms.seek(0);
      do {
        const auto at = [&](int k) {
          const auto sk = static_cast<std::size_t>(k);
          return call.data[sk] == nullptr ? nullptr : call.data[sk] + (base[sk] + terms.offset(k)) * static_cast<int64_t>(size);
        };
        double p, r;
        const std::byte* g = call.term == Term::value ? at(0) : at(2);
        if (!term_of(call, at(0), at(1), g, p, r)) {
          covered = false;
          break;
        }
        only_negative_zeros = only_negative_zeros && p == 0 && std::signbit(p) && r == 0;
        const double s = block_hi + p;
        const double bv = s - block_hi;
        block_lo += ((block_hi - (s - bv)) + (p - bv)) + r;
        block_hi = s;
        magnitude += std::fabs(p) + std::fabs(r);
        if (++in_block == kBlockTerms) {
          const double t = hi + block_hi;
          const double tv = t - hi;
          lo += ((hi - (t - tv)) + (block_hi - tv)) + block_lo;
          hi = t;
          block_hi = block_lo = 0;
          in_block = 0;
          ++blocks;
        }
      } while (terms.next());
    }
    uint64_t bits = 0;
    bool decided = false;
    if (covered) {
      const double t = hi + block_hi;
      const double tv = t - hi;
      lo += ((hi - (t - tv)) + (block_hi - tv)) + block_lo;
      hi = t;
      ++blocks;
      if (magnitude == 0) {
        // Every term exactly zero (term_of): IEEE's sign of their sum.
        bits = zero_bits(call.output, only_negative_zeros);
        decided = true;
      } else {
        const double chain = static_cast<double>(kBlockTerms + blocks + 2);
        const double error =
            (0x1p-100 + 4 * chain * chain * kUnit * kUnit) * magnitude * (1 + 0x1p-20) * (1 + 2 * chain * kUnit);
        // A mean's gradient: the approximation divided, with its bound (none
        // for divisors beyond 2^53 or tiny quotients: the exact path divides).
        const std::optional<Approximation> value =
            call.divisor == 0 ? std::optional<Approximation>(Approximation{hi, lo, error})
                              : divide(Approximation{hi, lo, error}, call.divisor);
        if (const auto rounded = value ? round_if_decided(*value, call.output) : std::nullopt) {
          bits = *rounded;
          decided = true;
        }
      }
    }
    if (!decided) bits = exact_bits(call, job.summed, base);
    const auto ordinal = static_cast<int64_t>(begin + o);
    if (job.results != nullptr) {
      job.results[ordinal] = bits;
    } else {
      store_bits(call.out + outputs.out_offset() * static_cast<int64_t>(dtype_size(call.output)), call.output, bits);
    }
    outputs.next();
  }
}

void run_summed(const ReduceCall& call) {
  const ReducePlan plan = make_reduce_plan(call);
  SummedJob job{&call, plan.kept(), plan.summed(), nullptr, fast_square_reductions_enabled()};
  std::vector<uint64_t> results(call.out_aliases_input ? static_cast<std::size_t>(call.outputs) : 0);
  if (call.out_aliases_input) job.results = results.data();
  const int threads = threads_for(call);
  const auto outputs = static_cast<std::size_t>(call.outputs);
  parallel_for(threads, outputs, std::max<std::size_t>(1, outputs / (static_cast<std::size_t>(threads) * 8)),
               &summed_outputs, &job);
  if (!call.out_aliases_input) return;
  DimWalker walk(job.kept);
  for (std::size_t ordinal = 0; ordinal < outputs; ++ordinal) {
    store_bits(call.out + walk.out_offset() * static_cast<int64_t>(dtype_size(call.output)), call.output,
               results[ordinal]);
    walk.next();
  }
}

}  // namespace

namespace {

// With the fast paths off (tests compare the two), every output, element-wise
// ones too, is summed exactly.
void run_calls(const std::array<ReduceCall, 2>& calls) {
  std::array<bool, 2> ran = {false, false};
  // The kernel rounds 2 (a - b) g itself, undivided: a mean's gradient takes the summed path.
  if (calls[0].term == Term::difference_product && calls[0].divisor == 0 && fast_square_reductions_enabled()) {
    ran = run_elementwise_products(calls);
  }
  for (std::size_t k = 0; k < 2; ++k) {
    if (!ran[k] && calls[k].outputs > 0) run_summed(calls[k]);
  }
}

// The call with its output redirected to a dense array of its elements
// (row-major over the kept dims), computed as if nothing overlapped.
ReduceCall into_dense(const ReduceCall& call, std::vector<std::byte>& storage) {
  ReduceCall aside = call;
  storage.resize(static_cast<std::size_t>(call.outputs) * dtype_size(call.output));
  aside.out = storage.data();
  aside.out_aliases_input = false;
  int64_t step = 1;
  for (std::size_t i = call.shape.size(); i-- > 0;) {
    aside.out_strides[i] = call.reduced[i] != 0 ? 0 : step;
    if (call.reduced[i] == 0) step *= call.shape[i];
  }
  return aside;
}

}  // namespace

void run_gradients(std::string_view /*op*/, const std::array<ReduceCall, 2>& calls) {
  const bool both = calls[0].outputs > 0 && calls[1].outputs > 0;
  if (!both || !(calls[0].out_aliases_input || calls[1].out_aliases_input)) {
    run_calls(calls);
    return;
  }
  // A gradient written over an input would change what the other one reads:
  // both are computed aside first, then stored (as if the inputs were copied).
  std::vector<std::byte> storage[2];
  run_calls({into_dense(calls[0], storage[0]), into_dense(calls[1], storage[1])});
  for (std::size_t k = 0; k < 2; ++k) {
    const ReduceCall& call = calls[k];
    const std::size_t size = dtype_size(call.output);
    const std::vector<ReduceDim> kept = make_reduce_plan(call).kept();  // the walker holds a reference
    DimWalker walk(kept);
    for (int64_t ordinal = 0; ordinal < call.outputs; ++ordinal) {
      std::memcpy(call.out + walk.out_offset() * static_cast<int64_t>(size),
                  storage[k].data() + static_cast<std::size_t>(ordinal) * size, size);
      walk.next();
    }
  }
}

}  // namespace sqdiff::detail
