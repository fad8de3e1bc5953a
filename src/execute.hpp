// Runs a plan: splits the output's elements into tiles across threads; each
// tile walks its rows with an odometer and calls one row kernel per row piece.
#pragma once

#include <cstddef>

#include "kernels/kernel_table.hpp"
#include "plan.hpp"

namespace sqdiff::detail {

// Below this much output a call runs on one thread with plain stores: a
// second thread costs more to wake than it saves (2 threads pay off from ~64K
// f32 elements).
inline constexpr std::size_t kMinParallelOutputBytes = std::size_t{256} << 10;

// How a call runs; choose_policy picks it from the size of the work.
struct ExecutionPolicy {
  int threads = 1;
  bool streaming_stores = false;  // non-temporal stores for outputs far larger than the caches
};

// `input_bytes`: what the inputs' views span. `requested_threads` is
// Options::threads (0 = library default). `output_aliases_input`: the output
// shares memory with an input (in-place), whose lines are in cache anyway, so
// streaming stores would not help.
ExecutionPolicy choose_policy(const Plan& plan, std::size_t element_size, std::size_t input_bytes,
                              int requested_threads, bool output_aliases_input);

// `a`, `b` and `out` are the callers' data pointers; the plan's offsets and
// strides (in elements of `dtype`) say where each row is. `table` is
// kernel_table(), looked up once by the caller.
void execute(const KernelTable& table, const Plan& plan, Op op, DType dtype, const std::byte* a, const std::byte* b,
             std::byte* out, const ExecutionPolicy& policy);

}  // namespace sqdiff::detail
