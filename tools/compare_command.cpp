#include "compare_command.hpp"

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "compare_report.hpp"
#include "input_pair.hpp"
#include "mapped_pages.hpp"
#include "progress.hpp"
#include "partial_shape.hpp"
#include "shape_count.hpp"
#include "sqdiff/compare.hpp"
#include "tensor_set.hpp"

namespace sqdiff::tools {
namespace {

struct CompareRequest {
  std::string a_path;
  std::string b_path;
  std::string mode = "none";  // shapes must match unless --broadcast numpy|pdpd
  std::string dtype;  // as for `run`: "" = as stored; "bf16" reads "<u2" files as bf16 bits
  bool quiet = false;
  bool json = false;
  CompareOptions options;  // broadcast, the gates and threads: the library's comparison's own options
};

int64_t byte_total(const InputPair& pair) {
  return element_count(pair.shape).value_or(0) * static_cast<int64_t>(dtype_size(pair.a.dtype()));
}

// An input walked exactly in its own row-major order is read once, front to
// back: the pages behind each chunk can be let go.
bool read_in_order(const NpyArray& array, const Shape& strides, const Shape& shape) {
  const Shape dense = dense_strides(shape);
  if (array.element_count() != element_count(shape).value_or(0)) return false;  // broadcast: read more than once
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > 1 && strides[i] != dense[i]) return false;  // size-1 dims have stride 0 here
  }
  return true;
}

// Compares one aligned pair, drawing the job's progress.
class Comparer {
 public:
  Comparer(const CompareRequest& request, int64_t total_bytes)
      : request_(request),
        progress_("sqdiff compare", total_bytes, ProgressBar::wanted(request.quiet, total_bytes)) {}

  CompareStats compare(const InputPair& pair) {
    const bool release_a = read_in_order(pair.a, pair.a_strides, pair.shape);
    const bool release_b = read_in_order(pair.b, pair.b_strides, pair.shape);
    const int64_t item = static_cast<int64_t>(dtype_size(pair.a.dtype()));
    // An input read in order holds compared position p at element p of its data.
    const auto* a_data = static_cast<const std::byte*>(pair.a.data());
    const auto* b_data = static_cast<const std::byte*>(pair.b.data());
    CompareOptions options = request_.options;
    options.on_progress = [&](int64_t first, int64_t elements) {
      const int64_t bytes = elements * item;
      if (release_a) release_mapped_pages(a_data + first * item, bytes);
      if (release_b) release_mapped_pages(b_data + first * item, bytes);
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ += bytes;
      progress_.update(done_);
    };
    return sqdiff::compare(pair.a.view(), pair.b.view(), options);
  }
  void finish() { progress_.finish(); }

 private:
  const CompareRequest& request_;
  ProgressBar progress_;
  std::mutex mutex_;
  int64_t done_ = 0;
};

// Aligns a pair of arrays; in mode none a shape mismatch says how to broadcast.
InputPair align(NpyArray a, NpyArray b, const CompareRequest& request, const std::string& what) {
  try {
    return align_input_pair(std::move(a), std::move(b), request.dtype, request.options.broadcast, what);
  } catch (const sqdiff::Error& e) {
    const std::string message = e.what();
    if (request.options.broadcast.kind == BroadcastKind::none && message.find("cannot broadcast") != std::string::npos) {
      throw sqdiff::Error(message + "; shapes must match (give --broadcast numpy to broadcast)");
    }
    throw;
  }
}

bool compare_files(const CompareRequest& request) {
  const TwoByteVoid two_byte_void = two_byte_void_for(request.dtype);
  NpyArray a = NpyArray::open(request.a_path, two_byte_void);  // a first: an error names a when both are bad
  NpyArray b = NpyArray::open(request.b_path, two_byte_void);
  const InputPair pair = align(std::move(a), std::move(b), request, "compare");
  Comparer comparer(request, byte_total(pair));
  const CompareStats result = comparer.compare(pair);
  comparer.finish();
  std::cout << (request.json ? to_json_text(pair_report(request.a_path, request.b_path, result)) + "\n"
                             : compare_text(request.a_path, request.b_path, result))
            << std::flush;
  return result.passed;
}

bool compare_sets(const CompareRequest& request) {
  std::vector<NamedArray> a = open_tensor_set(request.a_path, two_byte_void_for(request.dtype));
  std::vector<NamedArray> b = open_tensor_set(request.b_path, two_byte_void_for(request.dtype));
  std::vector<std::string> missing, extra;
  std::vector<InputPair> pairs;
  std::vector<std::string> names;
  std::size_t j = 0;
  for (NamedArray& x : a) {  // both sorted by name: one merge
    while (j < b.size() && b[j].name < x.name) extra.push_back(b[j++].name);
    if (j < b.size() && b[j].name == x.name) {
      pairs.push_back(align(std::move(x.array), std::move(b[j].array), request, "compare: tensor " + x.name));
      names.push_back(x.name);
      ++j;
    } else {
      missing.push_back(x.name);
    }
  }
  for (; j < b.size(); ++j) extra.push_back(b[j].name);
  int64_t total_bytes = 0;
  for (const InputPair& pair : pairs) total_bytes += byte_total(pair);
  Comparer comparer(request, total_bytes);
  std::vector<NamedComparison> results;
  for (std::size_t i = 0; i < pairs.size(); ++i) results.push_back({names[i], comparer.compare(pairs[i])});
  comparer.finish();
  std::cout << (request.json ? to_json_text(set_report(request.a_path, request.b_path, results, missing, extra)) + "\n"
                             : set_text(request.a_path, request.b_path, results, missing, extra))
            << std::flush;
  return set_passed(results, missing.size(), extra.size());
}

}  // namespace

void register_compare_command(CLI::App& app) {
  auto request = std::make_shared<CompareRequest>();
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Report how far apart two .npy arrays (or two .npz files / folders of .npy files, tensor by tensor) are, "
      "and gate on it: --atol/--rtol (numpy.allclose's rule), --fail-above MSE");
  sub->add_option("a", request->a_path, "First .npy file (a, the reference), or a .npz file or folder of .npy files")
      ->required();
  sub->add_option("b", request->b_path, "Second .npy file (b), of the same dtype; or a .npz file or folder")->required();
  sub->add_option("--broadcast", request->mode,
                  "Broadcast mode: none (shapes must match), numpy or pdpd; the report says when it broadcast")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "numpy", "pdpd"}, CLI::ignore_case));
  sub->add_option("--axis", request->options.broadcast.axis,
                  "pdpd only: the dim of a where b starts; -1 aligns b right. Write negative values as --axis=-1")
      ->capture_default_str()
      ->check(fits_in<int64_t>());
  const std::string tolerance_range = "a finite number, 0 or more";
  sub->add_option("--atol", request->options.atol,
                  "Tolerance gate: |a - b| <= atol + rtol * |b| for every pair (numpy.allclose's rule); "
                  "exit status 3 otherwise. Default when only --rtol is given: 1e-08")
      ->check(number_in(0, std::numeric_limits<double>::max(), tolerance_range));
  sub->add_option("--rtol", request->options.rtol, "The gate's relative tolerance. Default when only --atol is given: 1e-05")
      ->check(number_in(0, std::numeric_limits<double>::max(), tolerance_range));
  sub->add_flag("--equal-nan", request->options.equal_nan,
                "Two NaNs at one position pass the tolerance gate (needs --atol or --rtol)");
  sub->add_option("--peak", request->options.peak,
                  "PSNR's peak signal value, finite and above 0; integer data default to the type's range "
                  "(255 for u8), float data have no PSNR without it")
      ->check(number_in(std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                        "a finite number greater than 0"));
  // An MSE is 0 or more, or NaN: a negative limit would fail every run. inf
  // fails only a NaN MSE.
  sub->add_option("--fail-above", request->options.fail_above,
                  "Exit with status 3 (after the report) when the MSE is above this value (0 or more; inf: "
                  "only a NaN MSE fails) or is NaN")
      ->check(number_in(0, std::numeric_limits<double>::infinity(), "a number from 0 to inf"));
  sub->add_flag("--json", request->json, "Print one JSON object instead of text (schema in docs/cli.md)");
  sub->add_option("--dtype", request->dtype,
                  "Read the inputs as this dtype; only bf16 (alias bfloat16) differs from the stored dtype: "
                  "it reads u16 (\"<u2\") files holding bf16 bits, and np.save'd ml_dtypes.bfloat16 arrays "
                  "(\"<V2\")")
      ->check(CLI::IsMember(dtype_names()));
  sub->add_option("--threads", request->options.threads, "Worker threads; 0 = library default")
      ->capture_default_str()
      ->check(integer_in<int>(0, std::numeric_limits<int>::max()));
  // For the tests: small chunks exercise the chunked path on small arrays.
  sub->add_option("--chunk-elements", request->options.chunk_elements, "Positions of the broadcast shape per chunk")
      ->group("")
      ->check(integer_in<int64_t>(1, std::numeric_limits<int64_t>::max()));
  sub->add_flag("-q,--quiet", request->quiet, "No progress bar (shown on a terminal for inputs over 64 MiB)");
  sub->footer(
      "Examples:\n"
      "  $ sqdiff compare ref.npy out.npy\n"
      "  $ sqdiff compare ref.npy out.npy --json --peak 1\n"
      "  $ sqdiff compare ref.npy out.npy --atol 1e-5 --rtol 1e-3\n"
      "      exit status 3 when a pair is out of tolerance (numpy.allclose's rule)\n"
      "  $ sqdiff compare image_a.npy image_b.npy --fail-above 0.5\n"
      "      u8 images: PSNR uses a peak of 255; exit status 3 when the MSE is above 0.5\n"
      "  $ sqdiff compare ref_outputs.npz outputs.npz --atol 1e-4\n"
      "      two sets (.npz files or folders of .npy files) tensor by tensor by name\n"
      "\n"
      "Shapes must match unless --broadcast numpy or pdpd is given. The inputs are memory-mapped and\n"
      "read once, chunk by chunk: files larger than memory are fine. The sum of squares and the MSE\n"
      "are exact values rounded once to f64 (as sum_squared_difference and mean_squared_difference\n"
      "give them). Exit status: 0 when every gate given passes (no gate: whenever the arrays were\n"
      "compared), 3 when one fails or a set misses names, 1 for a job error, 2 for a command-line\n"
      "mistake.");
  sub->callback([request] {
    request->options.broadcast.kind = parse_broadcast_kind(request->mode);
    if (request->options.equal_nan && !request->options.atol && !request->options.rtol) {
      throw CLI::ValidationError("--equal-nan", "applies to the tolerance gate: give --atol and/or --rtol too");
    }
    const bool a_set = is_tensor_set(request->a_path), b_set = is_tensor_set(request->b_path);
    if (a_set != b_set) {
      throw sqdiff::Error("compare: " + std::string(a_set ? "a" : "b") + " (" + (a_set ? request->a_path : request->b_path) +
                          ") is a set of tensors (.npz file or folder) but " + (a_set ? "b" : "a") +
                          " is not: compare a set with a set, a .npy file with a .npy file");
    }
    const bool passed = a_set ? compare_sets(*request) : compare_files(*request);
    if (!passed) throw CLI::RuntimeError(kExitGateFailed);
  });
}

}  // namespace sqdiff::tools
