// The public entry points: validate -> plan -> run.
#include "sqdiff/ops.hpp"

#include <string_view>

#include "elementwise/call_memo.hpp"
#include "elementwise/dense_fast_path.hpp"
#include "elementwise/execute.hpp"
#include "elementwise/overlap_snapshots.hpp"
#include "elementwise/plan.hpp"
#include "elementwise/short_rows.hpp"
#include "kernels/kernel_table.hpp"
#include "shape/validate.hpp"

namespace sqdiff {
namespace {

// Everything but the fast paths: validate, plan (remembering the plan when it
// can serve a repeated call), run. Out of line: its locals (a CheckedCall, a
// Plan: ~3 KB) would otherwise be set up on every call, the fast ones included.
[[gnu::noinline]] void run_general(const detail::KernelTable& table, detail::Op op, std::string_view name,
                                   const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                                   const Options& options, detail::CallMemo& memo) {
  detail::CheckedCall call = detail::validate_call(name, a, b, out, options);
  if (call.element_count == 0) return;
  detail::InputSnapshots snapshots;
  const bool snapshotted = detail::snapshot_overlapping_inputs(call, options.broadcast, snapshots);
  detail::Plan plan = detail::make_plan(call.aligned);
  detail::ShortRowInputs inputs{call.a.data, call.b.data};
  memo.forget();  // its plan may point into the scratch rebuilt here
  detail::widen_short_rows(plan, call.element_size, table.lookup_lanes[static_cast<int>(call.dtype)], inputs,
                           memo.scratch());
  // A plan that read the inputs (snapshots, copied blocks) holds for this call only.
  const bool read_no_data = !snapshotted && inputs.a == call.a.data && inputs.b == call.b.data;
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
