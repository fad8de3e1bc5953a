// The public entry points: validate -> plan -> run.
#include "sqdiff/ops.hpp"

#include <string_view>
#include <vector>

#include "elementwise/call_memo.hpp"
#include "elementwise/dense_fast_path.hpp"
#include "elementwise/execute.hpp"
#include "elementwise/plan.hpp"
#include "elementwise/short_rows.hpp"
#include "elementwise/strided_copy.hpp"
#include "kernels/kernel_table.hpp"
#include "shape/dense_strides.hpp"
#include "shape/validate.hpp"

namespace sqdiff {
namespace {

// Replaces an input that partly overlaps the output by a dense snapshot, so
// the result is as if both inputs had been read before anything was written.
void snapshot(detail::CheckedInput& input, std::size_t element_size, std::vector<std::byte>& storage) {
  storage = detail::dense_copy(input, element_size);
  input.data = storage.data();
  input.strides = detail::dense_strides(input.shape);
}

// Everything but the fast paths: validate, plan (remembering the plan when it
// can serve a repeated call), run. Out of line: its locals (a CheckedCall, a
// Plan: ~3 KB) would otherwise be set up on every call, the fast ones included.
[[gnu::noinline]] void run_general(const detail::KernelTable& table, detail::Op op, std::string_view name,
                                   const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                                   const Options& options, detail::CallMemo& memo) {
  detail::CheckedCall call = detail::validate_call(name, a, b, out, options);
  if (call.element_count == 0) return;
  std::vector<std::byte> a_snapshot;
  std::vector<std::byte> b_snapshot;
  if (call.a_needs_copy) snapshot(call.a, call.element_size, a_snapshot);
  if (call.b_needs_copy) snapshot(call.b, call.element_size, b_snapshot);
  if (call.a_needs_copy || call.b_needs_copy) call.aligned = detail::align_operands(call, options.broadcast);
  detail::Plan plan = detail::make_plan(call.aligned);
  detail::ShortRowInputs inputs{call.a.data, call.b.data};
  memo.forget();  // its plan may point into the scratch rebuilt here
  detail::widen_short_rows(plan, call.element_size, table.lookup_lanes[static_cast<int>(call.dtype)], inputs,
                           memo.scratch());
  // A plan that read the inputs (snapshots, copied blocks) holds for this call only.
  const bool read_no_data = !call.a_needs_copy && !call.b_needs_copy && inputs.a == call.a.data &&
                            inputs.b == call.b.data;
  if (read_no_data) memo.remember(table, a, b, out, options, call, plan);
  const detail::ExecutionPolicy policy =
      detail::choose_policy(plan, call.element_size, call.input_bytes, options.threads, call.output_aliases_input);
  detail::execute(table, plan, op, call.dtype, inputs.a, inputs.b, call.out, policy);
}

void run(detail::Op op, std::string_view name, const ConstTensorView& a, const ConstTensorView& b,
         const TensorView& out, const Options& options) {
  if (detail::try_dense_fast_path(op, a, b, out, options)) return;
  const detail::KernelTable& table = detail::kernel_table();
  thread_local detail::RecentCalls recent;
  if (recent.try_run(table, op, a, b, out, options)) return;
  run_general(table, op, name, a, b, out, options, recent.claim());
}

}  // namespace

void subtract(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
              const Options& options) {
  run(detail::Op::subtract, "subtract", a, b, out, options);
}

void squared_difference(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                        const Options& options) {
  run(detail::Op::squared_difference, "squared_difference", a, b, out, options);
}

}  // namespace sqdiff
