#include "reduce/reduce_execute.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include "reduce/bounded_sum.hpp"
#include "reduce/element_access.hpp"
#include "reduce/exact_reduce.hpp"
#include "reduce/fast_squares.hpp"
#include "reduce/integer_squares.hpp"
#include "reduce/reduce_plan.hpp"
#include "reduce/rounding.hpp"
#include "runtime/thread_pool.hpp"
#include "sqdiff/error.hpp"
#include "sqdiff/threads.hpp"

namespace sqdiff::detail {
namespace {

// Terms below this many run on the calling thread.
constexpr int64_t kMinParallelTerms = int64_t{1} << 16;

struct Job {
  const ReduceCall* call;
  std::vector<ReduceDim> kept;
  std::vector<ReduceDim> summed;
  uint64_t* results = nullptr;  // buffered results by output ordinal, or null: written in place
  bool partial = false;  // write exact states, not rounded values
  BoundedSum* bounded = nullptr;  // not null: the exact sums as bounded ones, by ordinal
  bool integer_squares = false;  // sums of integer squares: exact, in 192 bits
  std::atomic<int64_t> first_failure{std::numeric_limits<int64_t>::max()};

  Job(const ReduceCall& c, const ReducePlan& plan)
      : call(&c),
        kept(plan.kept()),
        summed(plan.summed()),
        integer_squares(!is_float_type(c.input) && c.term == Term::square_of_difference) {}
};

void write_result(const ReduceCall& call, std::byte* out_base, int64_t out_offset, uint64_t bits) {
  store_bits(out_base + out_offset * static_cast<int64_t>(dtype_size(call.output)), call.output, bits);
}

void run_outputs(void* context, std::size_t begin, std::size_t count) {
  Job& job = *static_cast<Job*>(context);
  const ReduceCall& call = *job.call;
  DimWalker walk(job.kept);
  walk.seek(static_cast<int64_t>(begin));
  for (std::size_t n = 0; n < count; ++n) {
    const auto ordinal = static_cast<int64_t>(begin + n);
    const std::array<int64_t, kMaxOperands> base = {walk.offset(0), walk.offset(1), walk.offset(2)};
    const ExactSum sum = job.integer_squares ? integer_square_sum(call, job.summed, base)
                                             : exact_output_sum(call, job.summed, base);
    if (job.bounded != nullptr) {
      job.bounded[ordinal] = bounded_of(sum);
      walk.next();
      continue;
    }
    if (job.partial) {
      sum.store(reinterpret_cast<uint64_t*>(call.out) + walk.out_offset() * static_cast<int64_t>(sum.words()));
      walk.next();
      continue;
    }
    const std::optional<uint64_t> bits =
        round_exact(sum, call.mean, static_cast<uint64_t>(call.count), call.output);
    if (!bits) {
      int64_t seen = job.first_failure.load();
      while (ordinal < seen && !job.first_failure.compare_exchange_weak(seen, ordinal)) {
      }
    } else if (job.results != nullptr) {
      job.results[ordinal] = *bits;
    } else {
      write_result(call, call.out, walk.out_offset(), *bits);
    }
    walk.next();
  }
}

// One thread for small calls: waking another costs more than it saves.
int threads_for(const ReduceCall& call) {
  const int requested = call.threads > 0 ? call.threads : default_threads();
  const int64_t terms = call.outputs * std::max<int64_t>(call.count, 1);
  return terms < kMinParallelTerms ? 1 : requested;
}

void run_job(Job& job) {
  const ReduceCall& call = *job.call;
  const int threads = threads_for(call);
  const auto outputs = static_cast<std::size_t>(call.outputs);
  const std::size_t tile = std::max<std::size_t>(1, outputs / (static_cast<std::size_t>(threads) * 8));
  parallel_for(threads, outputs, tile, &run_outputs, &job);
}

}  // namespace

void execute_partial_reduction(const ReduceCall& call) {
  if (call.outputs == 0) return;
  const ReducePlan plan = make_reduce_plan(call);
  Job job(call, plan);
  job.partial = true;
  run_job(job);
}

std::vector<BoundedSum> execute_bounded_partial_reduction(const ReduceCall& call) {
  std::vector<BoundedSum> by_offset(static_cast<std::size_t>(call.outputs));
  if (call.outputs == 0) return by_offset;
  const ReducePlan plan = make_reduce_plan(call);
  Job job(call, plan);
  std::vector<BoundedSum> by_ordinal(static_cast<std::size_t>(call.outputs));
  if (call.count > 0 && !plan.dims.empty() && fast_square_reductions_enabled()) {
    fast_square_bounds(call, plan, threads_for(call), by_ordinal.data());
  } else {
    job.bounded = by_ordinal.data();
    run_job(job);
  }
  DimWalker walk(job.kept);
  for (const BoundedSum& sum : by_ordinal) {
    by_offset[static_cast<std::size_t>(walk.out_offset())] = sum;
    walk.next();
  }
  return by_offset;
}

void execute_reduction(std::string_view op, const ReduceCall& call) {
  if (call.outputs == 0) return;
  const ReducePlan plan = make_reduce_plan(call);
  Job job(call, plan);
  const bool buffered = call.out_aliases_input || !is_float_output(call.output);
  std::vector<uint64_t> results(buffered ? static_cast<std::size_t>(call.outputs) : 0);
  job.results = buffered ? results.data() : nullptr;
  if (call.term == Term::square_of_difference && is_float_type(call.input) && call.count > 0 && !plan.dims.empty() &&
      fast_square_reductions_enabled()) {
    fast_square_reduction(call, plan, threads_for(call), job.results);
  } else {
    run_job(job);
  }

  if (job.first_failure.load() != std::numeric_limits<int64_t>::max()) {
    throw Error(std::string(op) + ": the sum of squares at output element " + std::to_string(job.first_failure.load()) +
                " (in row-major order) does not fit " + std::string(dtype_name(call.output)) +
                "; nothing was written (ask for an f64 output for sums this large)");
  }
  if (!buffered) return;
  DimWalker walk(job.kept);
  for (int64_t ordinal = 0; ordinal < call.outputs; ++ordinal) {
    write_result(call, call.out, walk.out_offset(), results[static_cast<std::size_t>(ordinal)]);
    walk.next();
  }
}

}  // namespace sqdiff::detail
