// The quantized entry points: the element-wise ops' validate -> plan -> run,
// with the quantized row kernels and the call's constants in place of the
// float ops' kernels. Only the per-element function differs.
#include <string_view>

#include "elementwise/execute.hpp"
#include "elementwise/overlap_snapshots.hpp"
#include "elementwise/plan.hpp"
#include "elementwise/short_rows.hpp"
#include "kernels/kernel_table.hpp"
#include "kernels/quantized_table.hpp"
#include "quantized/quant_params.hpp"
#include "shape/validate.hpp"
#include "sqdiff/quantized.hpp"

namespace sqdiff {
namespace {

void run(detail::QuantizedOp op, std::string_view name, const ConstTensorView& a, QuantParams qa,
         const ConstTensorView& b, QuantParams qb, const TensorView& out, QuantParams qout,
         const QuantizedOptions& options) {
  // Every check runs before anything is written: the quantization first, then
  // the shapes, strides, extents and threads as for the float ops.
  const detail::QuantizedCall quantized =
      detail::prepare_quantized_call(name, op, a.dtype, qa, b.dtype, qb, out.dtype, qout, options);
  const Options shape_options{.broadcast = options.broadcast, .threads = options.threads};
  detail::CheckedCall call = detail::validate_call(name, a, b, out, shape_options);
  if (call.element_count == 0) return;

  detail::InputSnapshots snapshots;
  detail::snapshot_overlapping_inputs(call, options.broadcast, snapshots);

  detail::Plan plan = detail::make_plan(call.aligned);
  detail::ShortRowInputs inputs{call.a.data, call.b.data};
  detail::ShortRowScratch scratch;
  // No block rows (lookup lanes 0): the quantized kernels have none, and
  // 8- and 16-bit lanes have no lookups in Highway 1.0.3 anyway.
  detail::widen_short_rows(plan, call.element_size, 0, inputs, scratch);
  const detail::ExecutionPolicy policy = detail::choose_policy(plan, call.element_size, call.input_bytes,
                                                               options.threads, call.output_aliases_input);
  const detail::RowKernels& kernels = detail::quantized_kernel_table().at(quantized.pipeline, quantized.half_input, quantized.type);
  const detail::GatherKernel gather = detail::kernel_table().gather.for_size(call.element_size);
  detail::execute(kernels, gather, plan, call.dtype, inputs.a, inputs.b, call.out, policy, &quantized.params);
}

}  // namespace

void quantized_squared_difference(const ConstTensorView& a, QuantParams qa, const ConstTensorView& b, QuantParams qb,
                                  const TensorView& out, QuantParams qout, const QuantizedOptions& options) {
  run(detail::QuantizedOp::squared_difference, "quantized_squared_difference", a, qa, b, qb, out, qout, options);
}

void quantized_subtract(const ConstTensorView& a, QuantParams qa, const ConstTensorView& b, QuantParams qb,
                        const TensorView& out, QuantParams qout, const QuantizedOptions& options) {
  run(detail::QuantizedOp::subtract, "quantized_subtract", a, qa, b, qb, out, qout, options);
}

}  // namespace sqdiff
