// Runs a plan: splits the output's elements into tiles across threads; each
// tile walks its rows with an odometer and calls one row kernel per row piece.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "elementwise/plan.hpp"
#include "kernels/kernel_table.hpp"

namespace sqdiff::detail {

// Below this much output a call runs on one thread with plain stores: a
// second thread costs more to wake than it saves (2 threads pay off from ~64K
// f32 elements).
inline constexpr std::size_t kMinParallelOutputBytes = std::size_t{256} << 10;

// How a call runs; choose_policy picks it from the size of the work.
struct ExecutionPolicy {
  int threads = 1;
  bool streaming_stores = false;  // non-temporal stores for outputs far larger than the caches
  // What each thread reads and writes fits in its core's L2, or one thread
  // works in place (RowKernels::narrow_long_rows).
  bool narrow_long_rows = false;
};

// Whether long rows take the narrower vectors of RowKernels::narrow_long_rows:
// when each thread's share of the call's bytes (`touched_bytes`, inputs and
// output) fits its L2, or when one thread works in place (elementwise-inl.h
// says why). Plain stores only.
bool narrows_long_rows(std::size_t touched_bytes, int threads, bool in_place);

// `input_bytes`: what the inputs' views span. `requested_threads` is
// Options::threads (0 = library default). `output_aliases_input`: the output
// shares memory with an input (in-place), whose lines are in cache anyway, so
// streaming stores would not help.
ExecutionPolicy choose_policy(const Plan& plan, std::size_t element_size, std::size_t input_bytes,
                              int requested_threads, bool output_aliases_input);

// A small call's run as the few kernel calls it makes, worked out once by
// record_run so that a repeated call (call_memo.hpp) replays them without
// choosing a policy or walking the plan: a 16-element block call took 68 ns
// that way, 42 replayed; the specs' [8,1,6,1] with [7,1,5] 145 and 122.
struct RecordedRun {
  static constexpr int kMaxCalls = 4;
  struct KernelCall {
    RowKernel RowKinds::*kernel;  // which kernel of the op's: the memo's key has no op
    int64_t a_offset;             // bytes from each data pointer
    int64_t b_offset;
    int64_t out_offset;
    std::size_t n;
    RowBatch batch;
  };
  int count = 0;
  bool complete = true;  // false: the run needs more calls, or packs strided rows
  DType dtype = DType::f32;
  std::array<KernelCall, kMaxCalls> calls = {};
};

// Records the run of `plan` from the pointers a, b and out, if it is a run
// that replay can repeat: one thread, plain stores, at most kMaxCalls kernel
// calls, no packed rows. Calls no kernel. `input_bytes` as for choose_policy.
bool record_run(const Plan& plan, DType dtype, std::size_t input_bytes, const std::byte* a, const std::byte* b,
                std::byte* out, RecordedRun& run);

// Makes the recorded kernel calls of `op` at new pointers, as execute would.
void replay(const KernelTable& table, Op op, const RecordedRun& run, const std::byte* a, const std::byte* b,
            std::byte* out);

// `a`, `b` and `out` are the callers' data pointers; the plan's offsets and
// strides (in elements of `dtype`) say where each row is. `table` is
// kernel_table(), looked up once by the caller.
void execute(const KernelTable& table, const Plan& plan, Op op, DType dtype, const std::byte* a, const std::byte* b,
             std::byte* out, const ExecutionPolicy& policy);

// The same walk with a given set of row kernels (of elements of `dtype`) and
// the gather that packs strided rows of that size; every kernel call gets
// `params` as RowBatch::params (the quantized ops' per-call constants).
void execute(const RowKernels& kernels, GatherKernel gather, const Plan& plan, DType dtype, const std::byte* a,
             const std::byte* b, std::byte* out, const ExecutionPolicy& policy, const void* params);

}  // namespace sqdiff::detail
