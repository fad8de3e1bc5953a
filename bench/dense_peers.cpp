#include "dense_peers.hpp"

#include <memory>
#include <exception>
#include <utility>

#include "case_support.hpp"
#include "onednn_peer.hpp"
#include "xnnpack_peer.hpp"

namespace sqdiff_bench {

void add_dense_peers(std::vector<Contender>& contenders, PeerOp op, const sqdiff::Shape& a_shape, const float* a,
                     const sqdiff::Shape& b_shape, const float* b, float* out, int threads) {
  const std::vector<int64_t> a_dims(a_shape.begin(), a_shape.end());
  const std::vector<int64_t> b_dims(b_shape.begin(), b_shape.end());
  const bool squared = op == PeerOp::squared_difference;

  auto xnnpack = std::make_shared<xnnpack_peer::Operator>(
      squared ? xnnpack_peer::Op::squared_difference : xnnpack_peer::Op::subtract, a_dims, a, b_dims, b, out,
      threads);
  Contender xnnpack_contender = library_contender("xnnpack", Role::peer, [xnnpack] { xnnpack->run(); }, threads);
  xnnpack_contender.note = xnnpack_peer::note(threads);
  contenders.push_back(std::move(xnnpack_contender));

  std::shared_ptr<onednn_peer::Operator> onednn;
  try {
    onednn = std::make_shared<onednn_peer::Operator>(
        squared ? onednn_peer::Op::squared_difference : onednn_peer::Op::subtract, a_dims, a, b_dims, b, out,
        threads);
  } catch (const std::exception&) {  // std::runtime_error from the peer, dnnl::error from oneDNN
    return;  // shapes oneDNN's binary cannot broadcast: no oneDNN figure for this case
  }
  Contender onednn_contender = library_contender("onednn", Role::peer, [onednn] { onednn->run(); }, threads);
  onednn_contender.note = onednn_peer::note(threads);
  contenders.push_back(std::move(onednn_contender));
}

}  // namespace sqdiff_bench
