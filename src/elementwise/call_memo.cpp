#include "elementwise/call_memo.hpp"

#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

bool CallMemo::matches(const KernelTable& table, const ConstTensorView& a, const ConstTensorView& b,
                       const TensorView& out, const Options& options) const {
  return remembered_ && &table == table_ && a.dtype == dtype_ && b.dtype == dtype_ && out.dtype == dtype_ &&
         options.threads >= 0 && options.broadcast.kind == mode_.kind && options.broadcast.axis == mode_.axis &&
         same_dims(a_shape_, a.shape) && same_dims(b_shape_, b.shape) && same_dims(out_shape_, out.shape) &&
         same_dims(a_strides_, a.strides) && same_dims(b_strides_, b.strides) && same_dims(out_strides_, out.strides);
}

bool CallMemo::try_run(const KernelTable& table, Op op, const ConstTensorView& a, const ConstTensorView& b,
                       const TensorView& out, const Options& options) const {
  if (!matches(table, a, b, out, options)) return false;
  // Remembered calls have elements, so the full path would reject a null
  // pointer or a view that wraps around the address space.
  if (a.data == nullptr || b.data == nullptr || out.data == nullptr) return false;
  ByteRange range_a{};
  ByteRange range_b{};
  ByteRange range_out{};
  if (!extent_a_.place(a.data, range_a) || !extent_b_.place(b.data, range_b) ||
      !extent_out_.place(out.data, range_out)) {
    return false;
  }
  // A snapshot is the full path's work.
  if (needs_snapshot(range_a, a.data, a_walks_like_out_, range_out, out.data) ||
      needs_snapshot(range_b, b.data, b_walks_like_out_, range_out, out.data)) {
    return false;
  }
  if (replayable_) {
    replay(table, op, recorded_, static_cast<const std::byte*>(a.data), static_cast<const std::byte*>(b.data),
           static_cast<std::byte*>(out.data));
    return true;
  }
  const ExecutionPolicy policy = choose_policy(plan_, dtype_size(dtype_), input_bytes_, options.threads,
                                               output_aliases_input(range_a, range_b, range_out));
  execute(table, plan_, op, dtype_, static_cast<const std::byte*>(a.data), static_cast<const std::byte*>(b.data),
          static_cast<std::byte*>(out.data), policy);
  return true;
}

bool RecentCalls::try_others(const KernelTable& table, Op op, const ConstTensorView& a, const ConstTensorView& b,
                             const TensorView& out, const Options& options) {
  for (std::size_t entry = 0; entry < kEntries; ++entry) {
    if (entry != last_ && memos_[entry].try_run(table, op, a, b, out, options)) {
      touch(entry);
      return true;
    }
  }
  return false;
}

CallMemo& RecentCalls::claim() {
  std::size_t oldest = 0;
  for (std::size_t entry = 1; entry < kEntries; ++entry) {
    if (used_[entry] < used_[oldest]) oldest = entry;
  }
  touch(oldest);
  return memos_[oldest];
}

void CallMemo::remember(const KernelTable& table, const ConstTensorView& a, const ConstTensorView& b,
                        const TensorView& out, const Options& options, const CheckedCall& call, const Plan& plan) {
  table_ = &table;
  dtype_ = call.dtype;
  mode_ = options.broadcast;
  a_shape_ = a.shape;
  a_strides_ = a.strides;
  b_shape_ = b.shape;
  b_strides_ = b.strides;
  out_shape_ = out.shape;
  out_strides_ = out.strides;
  extent_a_ = call.extent_a;
  extent_b_ = call.extent_b;
  extent_out_ = call.extent_out;
  a_walks_like_out_ = call.a_walks_like_out;
  b_walks_like_out_ = call.b_walks_like_out;
  input_bytes_ = call.input_bytes;
  replayable_ = record_run(plan, call.dtype, call.input_bytes, static_cast<const std::byte*>(a.data),
                           static_cast<const std::byte*>(b.data), static_cast<std::byte*>(out.data), recorded_);
  if (!replayable_) copy_plan(plan, plan_);
  remembered_ = true;
}

}  // namespace sqdiff::detail
