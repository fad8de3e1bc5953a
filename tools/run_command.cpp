#include "run_command.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>

#include "cli_checks.hpp"
#include "input_pair.hpp"
#include "npy.hpp"
#include "partial_shape.hpp"
#include "progress.hpp"
#include "quant_options.hpp"
#include "reduce_run.hpp"
#include "shape_count.hpp"
#include "sqdiff/chunk_plan.hpp"

namespace sqdiff::tools {
namespace {

using OpFunction = void (*)(const ConstTensorView&, const ConstTensorView&, const TensorView&, const Options&);

OpFunction op_function(const std::string& op) {
  if (op == "squared_difference") return &sqdiff::squared_difference;
  if (op == "subtract") return &sqdiff::subtract;
  throw sqdiff::Error("unknown op \"" + op + "\" (expected squared_difference or subtract)");
}

// One library call on views that all have the output's shape (broadcast
// inputs have stride 0), so no broadcast mode is needed.
using ElementOp = std::function<void(const ConstTensorView&, const ConstTensorView&, const TensorView&)>;

ElementOp element_op(const RunRequest& request) {
  const OpFunction op = op_function(request.op);
  if (!request.quantized) {
    Options options;
    options.threads = request.threads;
    return [op, options](const ConstTensorView& a, const ConstTensorView& b, const TensorView& out) {
      op(a, b, out, options);
    };
  }
  QuantizedRun quantized = *request.quantized;
  quantized.options.threads = request.threads;
  const auto quantized_op =
      request.op == "subtract" ? &sqdiff::quantized_subtract : &sqdiff::quantized_squared_difference;
  return [quantized_op, quantized](const ConstTensorView& a, const ConstTensorView& b, const TensorView& out) {
    quantized_op(a, quantized.a, b, quantized.b, out, quantized.out, quantized.options);
  };
}

// The quantized ops check their types and parameters before anything else,
// also on empty views: one such call refuses a bad parameter before the output
// is opened, so that nothing is written, not even a header into a pipe.
void check_parameters(const ElementOp& op, DType dtype) {
  alignas(8) std::byte a[8]{}, b[8]{}, out[8]{};
  const Shape empty{0};
  op(ConstTensorView{a, dtype, empty}, ConstTensorView{b, dtype, empty}, TensorView{out, dtype, empty});
}

int64_t product(const Shape& shape, std::size_t from, std::size_t to) {
  int64_t n = 1;
  for (std::size_t i = from; i < to; ++i) n *= shape[i];
  return n;
}

const std::byte* element(const void* base, int64_t offset, std::size_t item) {
  return static_cast<const std::byte*>(base) + offset * static_cast<int64_t>(item);
}

}  // namespace

Shape aligned_strides(const Shape& out_shape, const Shape& shape, const Shape& strides, const Broadcast& mode,
                      bool is_b) {
  const std::size_t rank = out_shape.size();
  std::size_t first = rank - shape.size();  // numpy and none align right
  if (mode.kind == BroadcastKind::pdpd) {
    first = !is_b ? 0 : (mode.axis == -1 ? rank - shape.size() : static_cast<std::size_t>(mode.axis));
  }
  Shape aligned(rank, 0);
  for (std::size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] != 1) aligned[first + j] = strides[j];
  }
  return aligned;
}

void run_npy(const RunRequest& request) {
  const ElementOp op = element_op(request);
  if (request.threads < 0) throw sqdiff::Error("--threads must be 0 (library default) or more");

  const InputPair inputs = open_input_pair(request.a_path, request.b_path, request.dtype, request.broadcast, request.op);
  const NpyArray& a = inputs.a;
  const NpyArray& b = inputs.b;
  const DType dtype = a.dtype();
  const std::size_t item = dtype_size(dtype);
  const Shape& out_shape = inputs.shape;
  if (request.quantized) check_parameters(op, dtype);

  NpyWriter writer(request.out_path, dtype, out_shape);
  const Shape& a_strides = inputs.a_strides;
  const Shape& b_strides = inputs.b_strides;
  const Shape out_strides = dense_strides(out_shape);
  const int64_t total = product(out_shape, 0, out_shape.size());
  const int64_t total_bytes = total * static_cast<int64_t>(item);

  ProgressBar progress("sqdiff run", total_bytes, ProgressBar::wanted(request.quiet, total_bytes));

  const std::size_t rank = out_shape.size();
  const int64_t chunk_elements = std::max<int64_t>(1, request.chunk_bytes / static_cast<int64_t>(item));
  if (total <= chunk_elements || rank == 0) {
    void* out = writer.region(0, total_bytes);
    op(ConstTensorView{a.data(), dtype, out_shape, a_strides}, ConstTensorView{b.data(), dtype, out_shape, b_strides},
       TensorView{out, dtype, out_shape, out_strides});
  } else {
    // Chunks of consecutive output elements (sqdiff/chunk_plan.hpp), in order, as a
    // written-through output (a pipe) needs them.
    const ChunkPlan plan(out_shape, chunk_elements);
    const std::size_t d = plan.split_dim();
    const auto tail = [&](const Shape& s) { return Shape(s.begin() + static_cast<std::ptrdiff_t>(d), s.end()); };
    const Shape a_tail = tail(a_strides), b_tail = tail(b_strides), out_tail = tail(out_strides);
    for (int64_t k = 0; k < plan.chunk_count(); ++k) {
      const Chunk chunk = plan.chunk(k);
      int64_t base_a = 0, base_b = 0;
      for (std::size_t i = 0; i < rank; ++i) {
        base_a += chunk.start[i] * a_strides[i];
        base_b += chunk.start[i] * b_strides[i];
      }
      const ConstTensorView av{element(a.data(), base_a, item), dtype, chunk.shape, a_tail};
      const ConstTensorView bv{element(b.data(), base_b, item), dtype, chunk.shape, b_tail};
      const int64_t item_bytes = static_cast<int64_t>(item);
      const TensorView ov{writer.region(chunk.first * item_bytes, chunk.elements * item_bytes), dtype, chunk.shape,
                          out_tail};
      op(av, bv, ov);
      progress.update((chunk.first + chunk.elements) * item_bytes);
    }
  }
  progress.finish();
  writer.commit();
}

void register_run_command(CLI::App& app) {
  auto request = std::make_shared<RunRequest>();
  auto mode = std::make_shared<std::string>("numpy");
  CLI::App* sub = app.add_subcommand("run", "Compute squared_difference or subtract of two .npy files");
  auto op = std::make_shared<std::string>();
  auto reduce = std::make_shared<ReduceRequest>();
  sub->add_option("--op", *op, "The operation: squared_difference or subtract (required without --reduce)")
      ->check(CLI::IsMember({"squared_difference", "subtract"}));
  sub->add_option("--reduce", reduce->kind,
                  "Write the sum or mean of (a - b)^2 over --axes instead (sum_/mean_squared_difference)")
      ->check(CLI::IsMember({"sum", "mean"}));
  sub->add_option("--axes", reduce->axes,
                  "With --reduce: the axes of the broadcast shape to reduce, e.g. 0,2 or -1 (--axes=-1); "
                  "default all; --axes none reduces none")
      ->check(CLI::Validator([](std::string& text) { return axes_problem(text); }, "LIST"));
  sub->add_flag("--keepdims", reduce->keepdims, "With --reduce: keep each reduced axis as a 1");
  sub->add_option("--out-dtype", reduce->out_dtype,
                  "With --reduce: the output's type (SPEC 7): the input type, f32 or f64 for floats; i64/u64 or "
                  "f64 for integer sums; f64 or f32 for integer means. Default: the input type for floats, "
                  "i64/u64 for integer sums, f64 for integer means")
      ->check(CLI::IsMember(out_dtype_names()));
  sub->add_option("a", request->a_path, "First input .npy file (a)")->required();
  sub->add_option("b", request->b_path, "Second input .npy file (b)")->required();
  sub->add_option("-o,--output", request->out_path, "Output .npy file (replaced atomically if it exists)")
      ->required();
  sub->add_option("--broadcast", *mode, "Broadcast mode: none, numpy or pdpd")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "numpy", "pdpd"}, CLI::ignore_case));
  sub->add_option("--axis", request->broadcast.axis,
                  "pdpd only: the dim of a where b starts; -1 aligns b right. Write negative values as --axis=-1")
      ->capture_default_str()
      ->check(fits_in<int64_t>());
  sub->add_option("--threads", request->threads, "Worker threads; 0 = library default")
      ->capture_default_str()
      ->check(integer_in<int>(0, std::numeric_limits<int>::max()));
  sub->add_option("--dtype", request->dtype,
                  "Read the inputs as this dtype; only bf16 (alias bfloat16) differs from the stored dtype: "
                  "it reads u16 (\"<u2\") files holding bf16 bits, and np.save'd ml_dtypes.bfloat16 arrays "
                  "(\"<V2\"), and writes the output as u16 bits")
      ->check(CLI::IsMember(dtype_names()));
  // For the tests: a small chunk size exercises the chunked path on small arrays.
  sub->add_option("--chunk-bytes", request->chunk_bytes, "Output bytes per library call")
      ->group("")
      ->check(integer_in<int64_t>(1, std::numeric_limits<int64_t>::max()));
  sub->add_flag("-q,--quiet", request->quiet, "No progress bar (shown on a terminal for outputs over 64 MiB)");
  auto quant = std::make_shared<QuantOptionText>();
  add_quant_options(*sub, *quant);
  sub->footer(
      "Examples:\n"
      "  $ sqdiff run --op squared_difference a.npy b.npy -o squared.npy\n"
      "      a.npy of shape [8,1,6,1] and b.npy of shape [7,1,5] give squared.npy of shape [8,7,6,5]\n"
      "  $ sqdiff run --op subtract a.npy b.npy -o diff.npy --threads 2 --quiet\n"
      "  $ sqdiff run --op subtract x.npy y.npy -o z.npy --broadcast pdpd --axis=1\n"
      "      x.npy of shape [2,3,4,5], y.npy of shape [3,1]: y is aligned with dims 1 and 2 of x\n"
      "  $ sqdiff run --op squared_difference p.npy q.npy -o pq.npy --broadcast none\n"
      "      none: p.npy and q.npy must have the same shape ([256,56] here)\n"
      "  $ sqdiff run --op squared_difference bf_a.npy bf_b.npy -o bf_out.npy --dtype bf16\n"
      "      bf_a.npy and bf_b.npy are uint16 arrays holding bf16 bits; so is bf_out.npy\n"
      "  $ sqdiff run --reduce mean a.npy b.npy -o mse.npy --axes 0,2\n"
      "      the mean of (a - b)^2 over dims 0 and 2 of [8,7,6,5]: mse.npy of shape [7,5]\n"
      "  $ sqdiff run --op subtract qa.npy qb.npy -o qd.npy --quant-a 0.5,0 --quant-b 0.25,10 "
      "--quant-out 0.125,0 --activation relu\n"
      "      int8 qa.npy and qb.npy (real values 0.5 * q and 0.25 * (q - 10)): qd.npy, int8, holds\n"
      "      max(a - b, 0) in steps of 0.125, computed as LiteRT's integer kernels compute it (SPEC 9)\n"
      "\n"
      "Inputs are memory-mapped and the output is written through a memory map under a\n"
      "temporary name in the output's directory, then renamed: it appears complete or not at all.\n"
      "C and Fortran order are read without copying; big-endian files are refused.\n"
      "Quantized data (SPEC 9): int8, uint8 or int16 files with --quant-a, --quant-b and\n"
      "--quant-out SCALE,ZERO_POINT (a stored q stands for scale * (q - zero_point)); the\n"
      "output has the inputs' dtype.");
  sub->callback([request, mode, op, reduce, quant] {
    request->broadcast.kind = parse_broadcast_kind(*mode);
    if (!reduce->kind.empty()) {
      quantized_run(*quant, "squared_difference", true);  // refuses the quantized options
      if (!op->empty() && *op != "squared_difference") {
        throw CLI::ValidationError("--reduce", "--reduce sums squared differences: --op must be squared_difference "
                                               "or left out, not " + *op);
      }
      reduce->a_path = request->a_path;
      reduce->b_path = request->b_path;
      reduce->out_path = request->out_path;
      reduce->broadcast = request->broadcast;
      reduce->dtype = request->dtype;
      reduce->threads = request->threads;
      run_reduction(*reduce);
      return;
    }
    if (op->empty()) throw CLI::RequiredError("--op");
    if (reduce->axes || reduce->keepdims || !reduce->out_dtype.empty()) {
      throw CLI::ValidationError("--axes, --keepdims and --out-dtype", "they go with --reduce");
    }
    request->op = *op;
    request->quantized = quantized_run(*quant, *op, false);
    run_npy(*request);
  });
}

}  // namespace sqdiff::tools
