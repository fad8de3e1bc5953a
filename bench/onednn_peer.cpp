#include "onednn_peer.hpp"

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <unordered_map>

namespace sqdiff_bench::onednn_peer {
namespace {

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Row-major dims of `shape`, left-padded with 1s to `rank` (oneDNN's binary
// wants both sources of the same rank, and at least 1).
dnnl::memory::dims padded(const std::vector<int64_t>& shape, std::size_t rank) {
  dnnl::memory::dims dims(rank - shape.size(), 1);
  dims.insert(dims.end(), shape.begin(), shape.end());
  return dims;
}

dnnl::memory::desc dense_desc(const dnnl::memory::dims& dims) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (std::size_t i = dims.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * dims[i];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace

struct Operator::State {
  int threads = 1;
  dnnl::stream stream;
  dnnl::binary primitive;
  std::unordered_map<int, dnnl::memory> args;
};

Operator::Operator(Op op, const std::vector<int64_t>& a_shape, const float* a, const std::vector<int64_t>& b_shape,
                   const float* b, float* out, int threads)
    : state_(std::make_unique<State>()) {
  state_->threads = threads;
  omp_set_num_threads(threads);
  const std::size_t rank = std::max<std::size_t>({a_shape.size(), b_shape.size(), 1});
  dnnl::memory::dims a_dims = padded(a_shape, rank);
  dnnl::memory::dims b_dims = padded(b_shape, rank);
  dnnl::memory::dims out_dims(rank);
  for (std::size_t i = 0; i < rank; ++i) out_dims[i] = std::max(a_dims[i], b_dims[i]);
  const float* src0 = a;
  const float* src1 = b;
  if (a_dims != out_dims && b_dims == out_dims && op == Op::squared_difference) {
    std::swap(a_dims, b_dims);
    std::swap(src0, src1);
  }
  if (a_dims != out_dims) throw std::runtime_error("onednn_peer: binary broadcasts src1 only");
  const dnnl::memory::desc src0_desc = dense_desc(a_dims);
  const dnnl::memory::desc src1_desc = dense_desc(b_dims);
  const dnnl::memory::desc dst_desc = dense_desc(out_dims);
  dnnl::primitive_attr attr;
  if (op == Op::squared_difference) {
    dnnl::post_ops post_ops;
    post_ops.append_eltwise(1.0F, dnnl::algorithm::eltwise_square, 0.0F, 0.0F);
    attr.set_post_ops(post_ops);
  }
  const dnnl::binary::desc desc(dnnl::algorithm::binary_sub, src0_desc, src1_desc, dst_desc);
  const dnnl::binary::primitive_desc pd(desc, attr, cpu_engine());
  state_->primitive = dnnl::binary(pd);
  state_->stream = dnnl::stream(cpu_engine());
  // oneDNN only reads the sources; its memory objects take non-const handles.
  state_->args = {{DNNL_ARG_SRC_0, dnnl::memory(src0_desc, cpu_engine(), const_cast<float*>(src0))},
                  {DNNL_ARG_SRC_1, dnnl::memory(src1_desc, cpu_engine(), const_cast<float*>(src1))},
                  {DNNL_ARG_DST, dnnl::memory(dst_desc, cpu_engine(), out)}};
}

Operator::~Operator() = default;

void Operator::run() {
  omp_set_num_threads(state_->threads);
  state_->primitive.execute(state_->stream, state_->args);
  state_->stream.wait();
}

std::string note(int threads) { return threads > 1 ? "binary_sub+square+omp2" : "binary_sub+square"; }

std::string version() {
  const dnnl_version_t* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB" : "other";
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + " (" + runtime +
         ")";
}

}  // namespace sqdiff_bench::onednn_peer
