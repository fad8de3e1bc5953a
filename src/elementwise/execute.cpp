#include "elementwise/execute.hpp"

#include <hwy/cache_control.h>

#include <algorithm>
#include <array>

#include "elementwise/strided_copy.hpp"
#include "runtime/cache_info.hpp"
#include "runtime/fp_environment.hpp"
#include "runtime/thread_pool.hpp"
#include "sqdiff/threads.hpp"

namespace sqdiff::detail {
namespace {

// Work is handed to threads in tiles of this much output: large enough to
// amortise the hand-out, small enough to balance two threads.
constexpr std::size_t kTileOutputBytes = std::size_t{128} << 10;
// Elements per packed block of a strided row: the three blocks stay in L1.
constexpr std::size_t kBlockElements = 512;

struct Call {
  const Plan* plan;
  const RowKinds* kernels;
  const RowKinds* plain_kernels;  // for rows that write through a packing buffer
  GatherKernel gather;            // packs strided rows (of element_size)
  DType dtype;
  std::size_t element_size;
  const std::byte* a;
  const std::byte* b;
  std::byte* out;
  bool streaming;
  RecordedRun* recording = nullptr;  // set: record the kernel calls instead of making them
  const void* params = nullptr;      // RowBatch::params of every kernel call
};

// Calls kernels.*kernel, or records the call.
void invoke(const Call& call, RowKernel RowKinds::*kernel, const std::byte* a, const std::byte* b, std::byte* out,
            std::size_t n, const RowBatch& batch) {
  RecordedRun* run = call.recording;
  if (run == nullptr) {
    (call.kernels->*kernel)(a, b, out, n, batch);
    return;
  }
  if (run->count == RecordedRun::kMaxCalls) {
    run->complete = false;
    return;
  }
  run->calls[static_cast<std::size_t>(run->count++)] = {kernel, a - call.a, b - call.b, out - call.out, n, batch};
}

// A piece of a row whose operands are not all unit-stride: operands with a
// stride other than 0 or 1 are packed into blocks, the output unpacked after.
void run_strided(const Call& call, const std::byte* a, const std::byte* b, std::byte* out, std::size_t n) {
  alignas(64) std::array<std::byte, kBlockElements * 8> block_a;
  alignas(64) std::array<std::byte, kBlockElements * 8> block_b;
  alignas(64) std::array<std::byte, kBlockElements * 8> block_out;
  const Plan& plan = *call.plan;
  const auto inner = static_cast<std::size_t>(plan.rank - 1);
  const int64_t stride_a = plan.stride_a[inner];
  const int64_t stride_b = plan.stride_b[inner];
  const int64_t stride_out = plan.stride_out[inner];
  const auto size = static_cast<int64_t>(call.element_size);
  // A packed output is written again by the scatter: plain stores into it.
  const RowKinds& kernels = stride_out == 1 ? *call.kernels : *call.plain_kernels;
  // Both inputs scalar along the row: widen one of them so the vs kernel applies.
  const bool both_scalar = stride_a == 0 && stride_b == 0;
  const RowBatch batch{.params = call.params};
  for (std::size_t done = 0; done < n; done += kBlockElements) {
    const std::size_t count = std::min(kBlockElements, n - done);
    const auto offset = static_cast<int64_t>(done);
    const std::byte* block_a_source = a + offset * stride_a * size;
    const std::byte* block_b_source = b + offset * stride_b * size;
    std::byte* block_out_target = out + offset * stride_out * size;
    bool a_is_row = stride_a == 1;
    bool b_is_row = stride_b == 1;
    if ((stride_a != 0 && stride_a != 1) || both_scalar) {
      call.gather(block_a_source, stride_a, block_a.data(), count);
      block_a_source = block_a.data();
      a_is_row = true;
    }
    if (stride_b != 0 && stride_b != 1) {
      call.gather(block_b_source, stride_b, block_b.data(), count);
      block_b_source = block_b.data();
      b_is_row = true;
    }
    std::byte* target = stride_out == 1 ? block_out_target : block_out.data();
    if (a_is_row && b_is_row) {
      kernels.vv(block_a_source, block_b_source, target, count, batch);
    } else if (a_is_row) {
      kernels.vs(block_a_source, block_b_source, target, count, batch);
    } else {
      kernels.sv(block_a_source, block_b_source, target, count, batch);
    }
    if (stride_out != 1) scatter(block_out.data(), block_out_target, stride_out, count, call.element_size);
  }
}

// Elements [column, column + count) of `rows` consecutive rows along the
// plan's second-innermost dim, the first starting at a, b, out; block rows
// repeat that `outer` times along the dim above (the others take outer = 1).
void run_rows(const Call& call, const std::byte* a, const std::byte* b, std::byte* out, std::size_t column,
              std::size_t count, std::size_t rows, std::size_t outer = 1) {
  const Plan& plan = *call.plan;
  const auto inner = static_cast<std::size_t>(plan.rank - 1);
  const std::size_t skip = column * call.element_size;
  RowBatch batch{.rows = rows, .params = call.params};
  if (rows > 1) {
    batch.a_stride = plan.stride_a[inner - 1];
    batch.b_stride = plan.stride_b[inner - 1];
    batch.out_stride = plan.stride_out[inner - 1];
  }
  switch (plan.row_kind) {
    case RowKind::vv: invoke(call, &RowKinds::vv, a + skip, b + skip, out + skip, count, batch); break;
    case RowKind::vs: invoke(call, &RowKinds::vs, a + skip, b, out + skip, count, batch); break;
    case RowKind::sv: invoke(call, &RowKinds::sv, a, b + skip, out + skip, count, batch); break;
    case RowKind::vp:
    case RowKind::pv: {
      // The repeating input stays at its pattern's start; the phase says where.
      batch.period = static_cast<std::size_t>(plan.period);
      batch.phase = column % batch.period;
      if (plan.row_kind == RowKind::vp) {
        invoke(call, &RowKinds::vp, a + skip, b, out + skip, count, batch);
      } else {
        invoke(call, &RowKinds::pv, a, b + skip, out + skip, count, batch);
      }
      break;
    }
    case RowKind::block:
      // The inputs stay at the row's start: the tables say where each element is.
      batch.a_index = plan.index_a + column;
      batch.b_index = plan.index_b + column;
      batch.a_span = static_cast<std::size_t>(plan.span_a);
      batch.b_span = static_cast<std::size_t>(plan.span_b);
      if (outer > 1) {
        batch.outer_rows = outer;
        batch.outer_a_stride = plan.stride_a[inner - 2];
        batch.outer_b_stride = plan.stride_b[inner - 2];
        batch.outer_out_stride = plan.stride_out[inner - 2];
      }
      invoke(call, &RowKinds::block, a, b, out + skip, count, batch);
      break;
    case RowKind::strided: {
      if (call.recording != nullptr) {  // packing is not a kernel call
        call.recording->complete = false;
        return;
      }
      const auto offset = static_cast<int64_t>(column) * static_cast<int64_t>(call.element_size);
      const auto size = static_cast<int64_t>(call.element_size);
      for (std::size_t r = 0; r < rows; ++r) {
        const auto row = static_cast<int64_t>(r);
        run_strided(call, a + offset * plan.stride_a[inner] + row * batch.a_stride * size,
                    b + offset * plan.stride_b[inner] + row * batch.b_stride * size,
                    out + offset * plan.stride_out[inner] + row * batch.out_stride * size, count);
      }
      break;
    }
  }
}

// Element offsets of the current row in each tensor. Kept apart from the
// odometer's index array so that they live in registers: as members beside the
// array they stayed in memory, and each advance stalled on a store-forward.
struct RowOffsets {
  int64_t a;
  int64_t b;
  int64_t out;

  void move(const Plan& plan, std::size_t k, int64_t steps) {
    a += steps * plan.stride_a[k];
    b += steps * plan.stride_b[k];
    out += steps * plan.stride_out[k];
  }
};

// Where the walk over the outer dims stands: an index per dim.
struct Odometer {
  // Entries from the plan's rank - 1 on are never read; zeroing all of them
  // would cost a small call more than its walk.
  std::array<int64_t, kMaxPlanRank> index;

  // Positions the odometer at `row` and returns that row's offsets.
  RowOffsets start(const Plan& plan, std::size_t row) {
    RowOffsets at{plan.offset_a, plan.offset_b, plan.offset_out};
    for (int d = plan.rank - 2; d >= 0; --d) {
      const auto k = static_cast<std::size_t>(d);
      if (row == 0) {  // every single-threaded call: no divisions
        index[k] = 0;
        continue;
      }
      const auto size = static_cast<std::size_t>(plan.size[k]);
      index[k] = static_cast<int64_t>(row % size);
      row /= size;
      at.move(plan, k, index[k]);
    }
    return at;
  }

  // Rows left before the second-innermost dim wraps.
  std::size_t rows_left_in_dim(const Plan& plan) const {
    if (plan.rank < 2) return 1;
    const auto k = static_cast<std::size_t>(plan.rank - 2);
    return static_cast<std::size_t>(plan.size[k] - index[k]);
  }

  // Whole batches of rows (the second-innermost dim from index 0 to its end)
  // left before the dim above wraps; 0 when there is no such dim or the walk
  // is not at the start of a batch.
  std::size_t batches_left_in_dim(const Plan& plan) const {
    if (plan.rank < 3) return 0;
    const auto k = static_cast<std::size_t>(plan.rank - 2);
    if (index[k] != 0) return 0;
    return static_cast<std::size_t>(plan.size[k - 1] - index[k - 1]);
  }

  // Forward by `rows` rows, where rows <= rows_left_in_dim().
  void advance(const Plan& plan, std::size_t rows, RowOffsets& at) {
    if (plan.rank < 2) return;
    advance_dim(plan, static_cast<std::size_t>(plan.rank - 2), rows, at);
  }

  // Forward by `batches` whole batches, where batches <= batches_left_in_dim().
  void advance_batches(const Plan& plan, std::size_t batches, RowOffsets& at) {
    advance_dim(plan, static_cast<std::size_t>(plan.rank - 3), batches, at);
  }

 private:
  // Forward by `steps` along dim k, carrying into the dims above.
  void advance_dim(const Plan& plan, std::size_t k, std::size_t steps, RowOffsets& at) {
    index[k] += static_cast<int64_t>(steps);
    at.move(plan, k, static_cast<int64_t>(steps));
    // Carry into the outer dims, innermost first.
    while (index[k] == plan.size[k]) {
      index[k] = 0;
      at.move(plan, k, -plan.size[k]);
      if (k == 0) return;  // walked past the last row
      --k;
      ++index[k];
      at.move(plan, k, 1);
    }
  }
};

// min(count / unit, most), without the division when count reaches most
// units: a division cost more than a whole batch of short rows' bookkeeping.
std::size_t whole_units(std::size_t count, std::size_t unit, std::size_t most) {
  return count >= most * unit ? most : count / unit;
}

// Output elements [begin, begin + count) in the plan's order: a partial first
// row, batches of whole rows, a partial last row.
void run_range(const Call& call, std::size_t begin, std::size_t count) {
  const Plan& plan = *call.plan;
  const auto n = static_cast<std::size_t>(plan.size[static_cast<std::size_t>(plan.rank - 1)]);
  // Divisions only where needed: each cost more than a whole batch of short
  // rows' bookkeeping (the specs' example spent ~15% of a call in them, perf).
  std::size_t column = begin == 0 ? 0 : begin % n;
  Odometer odometer;
  RowOffsets at = odometer.start(plan, begin == 0 ? 0 : begin / n);
  const auto element_size = static_cast<int64_t>(call.element_size);
  while (count > 0) {
    if (call.recording != nullptr && !call.recording->complete) return;  // no use going on
    const std::byte* a = call.a + at.a * element_size;
    const std::byte* b = call.b + at.b * element_size;
    std::byte* out = call.out + at.out * element_size;
    if (column != 0 || count < n) {
      const std::size_t piece = std::min(count, n - column);
      run_rows(call, a, b, out, column, piece, 1);
      count -= piece;
      if (column + piece < n) break;  // the range ended inside this row
      column = 0;
      odometer.advance(plan, 1, at);
      continue;
    }
    const std::size_t rows_left = odometer.rows_left_in_dim(plan);
    const std::size_t rows = whole_units(count, n, rows_left);
    if (plan.row_kind == RowKind::block && rows == rows_left) {
      // Short rows: the kernel also walks the dim above, for as many whole
      // batches as the range holds (the specs' example: 1 kernel call, not 8).
      const std::size_t batch_elements = rows * n;
      const std::size_t batches = whole_units(count, batch_elements, odometer.batches_left_in_dim(plan));
      if (batches > 1) {
        run_rows(call, a, b, out, 0, n, rows, batches);
        count -= batches * batch_elements;
        odometer.advance_batches(plan, batches, at);
        continue;
      }
    }
    run_rows(call, a, b, out, 0, n, rows);
    count -= rows * n;
    odometer.advance(plan, rows, at);
  }
}

void run_tile(void* context, std::size_t begin, std::size_t count) {
  const Call& call = *static_cast<const Call*>(context);
  const ScopedIeeeDefaults ieee_defaults(call.dtype);  // on the caller's thread and the workers
  run_range(call, begin, count);
  // Streaming stores are weakly ordered: fence before the pool reports the
  // tile done, so the caller sees every store once the call returns.
  if (call.streaming) hwy::FlushStream();
}

}  // namespace

ExecutionPolicy choose_policy(const Plan& plan, std::size_t element_size, std::size_t input_bytes,
                              int requested_threads, bool output_aliases_input) {
  ExecutionPolicy policy;
  const std::size_t output_bytes = static_cast<std::size_t>(plan.element_count) * element_size;
  const int threads = requested_threads > 0 ? requested_threads : default_threads();
  policy.threads = output_bytes >= kMinParallelOutputBytes ? threads : 1;
  // Streaming pays when the output would be evicted before anyone reads it:
  // when the call moves more than the last-level cache holds. Counting the
  // inputs matters: a 32 MiB output from a 32 MiB input on a 32 MiB cache ran
  // at 0.51-0.70 of a streaming copy with plain stores, 0.89-1.00 streaming.
  // Strided inputs stream too when the output's rows are dense (8M reversed
  // f32: 0.61-0.75 of the streaming bound with plain stores, 0.95 streaming).
  // An output written from small inputs by several threads stays in cache far
  // longer than sysfs's one shared L3 suggests (the two vCPUs here behave as if
  // each had its own): with 2 threads, sqdiff's both-sided broadcasts ran at
  // 61 GB/s with plain stores against 28 streaming for a 32 MiB output, and at
  // 32 against 28 for 64 MiB (bench); plain and streaming fill loops tie only
  // from ~256 MiB on.
  const bool writes_mostly = input_bytes * 8 < output_bytes;
  const std::size_t cache_share =
      writes_mostly && policy.threads > 1 ? 2 * static_cast<std::size_t>(policy.threads) : 1;
  const bool dense_rows = plan.rank > 0 && plan.stride_out[static_cast<std::size_t>(plan.rank - 1)] == 1;
  policy.streaming_stores = !output_aliases_input && dense_rows &&
                            output_bytes + input_bytes > cache_share * last_level_cache_bytes();
  policy.narrow_long_rows = !policy.streaming_stores &&
                            narrows_long_rows(input_bytes + output_bytes, policy.threads, output_aliases_input);
  return policy;
}

bool narrows_long_rows(std::size_t touched_bytes, int threads, bool in_place) {
  return (in_place && threads == 1) || touched_bytes <= level2_cache_bytes() * static_cast<std::size_t>(threads);
}

bool record_run(const Plan& plan, DType dtype, std::size_t input_bytes, const std::byte* a, const std::byte* b,
                std::byte* out, RecordedRun& run) {
  run = RecordedRun{};
  run.dtype = dtype;
  const std::size_t element_size = dtype_size(dtype);
  // Below this size every call runs on one thread whatever Options::threads
  // says, and aliasing only ever turns streaming off.
  if (static_cast<std::size_t>(plan.element_count) * element_size >= kMinParallelOutputBytes) return false;
  if (choose_policy(plan, element_size, input_bytes, 1, false).streaming_stores) return false;
  const Call call{
      .plan = &plan,
      .kernels = nullptr,
      .plain_kernels = nullptr,
      .gather = nullptr,
      .dtype = dtype,
      .element_size = element_size,
      .a = a,
      .b = b,
      .out = out,
      .streaming = false,
      .recording = &run,
  };
  run_range(call, 0, static_cast<std::size_t>(plan.element_count));
  return run.complete && run.count > 0;
}

void replay(const KernelTable& table, Op op, const RecordedRun& run, const std::byte* a, const std::byte* b,
            std::byte* out) {
  const RowKinds& kernels = table.at(op, run.dtype).plain;
  const ScopedIeeeDefaults ieee_defaults(run.dtype);
  for (int i = 0; i < run.count; ++i) {
    const RecordedRun::KernelCall& call = run.calls[static_cast<std::size_t>(i)];
    (kernels.*call.kernel)(a + call.a_offset, b + call.b_offset, out + call.out_offset, call.n, call.batch);
  }
}

void execute(const KernelTable& table, const Plan& plan, Op op, DType dtype, const std::byte* a, const std::byte* b,
             std::byte* out, const ExecutionPolicy& policy) {
  execute(table.at(op, dtype), table.gather.for_size(dtype_size(dtype)), plan, dtype, a, b, out, policy, nullptr);
}

void execute(const RowKernels& kernels, GatherKernel gather, const Plan& plan, DType dtype, const std::byte* a,
             const std::byte* b, std::byte* out, const ExecutionPolicy& policy, const void* params) {
  if (plan.element_count == 0) return;
  const std::size_t element_size = dtype_size(dtype);
  Call call{
      .plan = &plan,
      .kernels = policy.streaming_stores   ? &kernels.streaming
                 : policy.narrow_long_rows ? &kernels.narrow_long_rows
                                           : &kernels.plain,
      .plain_kernels = &kernels.plain,
      .gather = gather,
      .dtype = dtype,
      .element_size = element_size,
      .a = a,
      .b = b,
      .out = out,
      .streaming = policy.streaming_stores,
      .params = params,
  };
  const auto total = static_cast<std::size_t>(plan.element_count);
  if (policy.threads <= 1) {
    run_tile(&call, 0, total);
    return;
  }
  const std::size_t tile = std::max<std::size_t>(kTileOutputBytes / call.element_size, 1);
  parallel_for(policy.threads, total, tile, &run_tile, &call);
}

}  // namespace sqdiff::detail
