#include "ir/ir_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir_model.hpp"
#include "ir/ir_outputs.hpp"
#include "ir/ir_run.hpp"
#include "cli_checks.hpp"
#include "input_file.hpp"
#include "ir/ir_shapes.hpp"
#include "output_directory.hpp"
#include "partial_shape.hpp"
#include "path_text.hpp"

namespace sqdiff::tools {
namespace {

constexpr std::size_t kValuesShown = 8;

struct IrArgs {
  std::string model;
  std::string bin;
  std::vector<std::string> inputs;
  std::optional<uint64_t> seed;
  std::string out_dir;
  int threads = 0;
};

std::string shape_text(const sqdiff::Shape& shape) { return format_partial_shape(PartialShape::from_shape(shape)); }

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void run_ir_command(const IrArgs& args) {
  using namespace sqdiff::tools::ir;
  if (!args.bin.empty()) (void)InputFile::open(args.bin, "the weights file (--bin)");
  const Model model = load_model(args.model);
  // Every line that holds a path or a name from the file goes through write_line (path_text.hpp).
  write_line(std::cout, args.model + ": IR v" + std::to_string(model.version) +
                            (model.name.empty() ? "" : " \"" + model.name + "\"") + ", " +
                            plural(model.layers.size(), "layer") + ", " + plural(model.edges.size(), "edge"));

  // 1. Shapes: every SquaredDifference and Subtract layer, checked.
  const ShapeReport report = check_shapes(model);
  for (const OpCheck& check : report.ops) write_line(std::cout, format_op_check(model, check));
  if (report.ops.empty()) std::cout << "no SquaredDifference or Subtract layers to check\n";
  std::cout.flush();
  // Const layers against the .bin, when there is one to check.
  const std::string bin = args.bin.empty() ? default_bin_path(args.model) : args.bin;
  std::vector<std::string> weight_problems;
  const bool has_const = std::any_of(model.layers.begin(), model.layers.end(),
                                     [](const Layer& layer) { return layer.type == "Const"; });
  if (has_const && std::filesystem::exists(bin)) weight_problems = check_weights(model, report, bin);
  if (!report.ok() || !weight_problems.empty()) {
    std::size_t failed_layers = 0;
    for (const OpCheck& check : report.ops) {
      if (!check.ok()) ++failed_layers;
      for (const std::string& problem : check.problems) std::cerr << error_line(problem);
    }
    for (const std::string& problem : report.other_problems) std::cerr << error_line(problem);
    for (const std::string& problem : weight_problems) std::cerr << error_line(problem);
    throw IrError(args.model + ": shape check failed: " +
                  plural(report.problem_count() + weight_problems.size(), "problem") + " (" +
                  std::to_string(failed_layers) + " of " + plural(report.ops.size(), "SquaredDifference/Subtract layer") +
                  " wrong" + (weight_problems.empty() ? "" : ", " + plural(weight_problems.size(), "Const") + " wrong") +
                  ")");
  }
  std::cout << "shape check: " << plural(report.ops.size(), "layer") << " ok\n";

  // 2. Running: only when asked for.
  const bool run = !args.inputs.empty() || args.seed.has_value() || !args.out_dir.empty();
  if (!run) return;
  RunOptions options;
  for (const std::string& item : args.inputs) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw IrError("--input " + item + ": expected NAME=FILE.npy (NAME is a Parameter layer's name)");
    }
    options.inputs.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  options.seed = args.seed;
  options.bin_path = args.bin;
  options.threads = args.threads;
  // The output directory is checked before the model runs: a directory that
  // cannot take the results is reported before any work.
  std::optional<StagedDirectory> staged;
  if (!args.out_dir.empty()) staged.emplace(args.out_dir);
  const RunOutput output = run_model(model, report, options);

  // Every file is staged, then the set appears at once: the lines naming the
  // files are printed only once they exist.
  std::vector<std::string> input_files(output.inputs.size());
  std::vector<std::string> result_files(output.results.size());
  if (staged) {
    const std::vector<std::string> input_names = random_input_file_names(model, output);
    for (std::size_t k = 0, named = 0; k < output.inputs.size(); ++k) {
      if (!output.inputs[k].random) continue;
      const std::string relative = "inputs/" + input_names[named++];
      staged->write(relative, [&](const std::string& path) { write_tensor(path, output.inputs[k].value); });
      input_files[k] = staged->final_path(relative);
    }
    const std::vector<std::string> result_names = result_file_names(model, output);
    for (std::size_t k = 0; k < output.results.size(); ++k) {
      staged->write(result_names[k], [&](const std::string& path) { write_tensor(path, output.results[k].value); });
      result_files[k] = staged->final_path(result_names[k]);
    }
    staged->commit();
  }
  for (std::size_t k = 0; k < output.inputs.size(); ++k) {
    const InputValue& in = output.inputs[k];
    const Layer& layer = model.layers[in.layer];
    write_line(std::cout, "input \"" + layer.name + "\" (layer " + std::to_string(layer.id) + "): " +
                              (in.random ? "random" + (input_files[k].empty() ? "" : ", saved as " + input_files[k])
                                         : in.file) +
                              ", " + std::string(sqdiff::dtype_name(in.value.dtype)) + " " +
                              shape_text(in.value.shape) + ": " + format_values(in.value, kValuesShown));
  }
  for (std::size_t k = 0; k < output.results.size(); ++k) {
    const ResultValue& r = output.results[k];
    const Layer& layer = model.layers[r.layer];
    write_line(std::cout, "result \"" + layer.name + "\" (layer " + std::to_string(layer.id) + "): " +
                              (result_files[k].empty() ? "" : result_files[k] + ", ") +
                              std::string(sqdiff::dtype_name(r.value.dtype)) + " " + shape_text(r.value.shape) + ": " +
                              format_values(r.value, kValuesShown));
  }
  if (output.results.empty()) std::cout << "the model has no Result layers: nothing to write\n";
}

}  // namespace

void register_ir_command(CLI::App& app) {
  auto args = std::make_shared<IrArgs>();
  CLI::App* sub = app.add_subcommand(
      "ir", "Check the shapes of an OpenVINO IR model's SquaredDifference and Subtract layers, and run it");
  sub->add_option("model", args->model, "The model's .xml file (OpenVINO IR version 10 or 11)")->required();
  sub->add_option("--bin", args->bin, "The weights file for Const layers (default: MODEL.bin beside the .xml)");
  sub->add_option("--input", args->inputs,
                  "NAME=FILE.npy: data for the Parameter layer called NAME (repeat for each Parameter)")
      ->allow_extra_args(false)
      ->check(name_equals_file("a Parameter layer's name"));
  sub->add_option("--random", args->seed,
                  "Random data for every Parameter without --input, from this seed (same seed, same data)")
      ->check(fits_in<uint64_t>());
  sub->add_option("-o,--output-dir", args->out_dir,
                  "Run the model and write each Result as DIR/<result name>.npy (random inputs: DIR/inputs/)");
  sub->add_option("--threads", args->threads, "Threads for the computation (0: the library's default)")
      ->check(integer_in<int>(0, std::numeric_limits<int>::max()));
  sub->footer(
      "Without --input, --random or -o, only the shapes are checked: each SquaredDifference and\n"
      "Subtract layer's output shape is inferred from its inputs (auto_broadcast none, numpy or\n"
      "pdpd with auto_broadcast_axis; dynamic ? and interval dims as in SPEC section 5) and\n"
      "compared with the dims its output port declares. A mismatch is reported with the layer's\n"
      "id, name and line, and the exit status is 1.\n"
      "\n"
      "With --input, --random or -o, the model is also run (Parameter, Const, SquaredDifference,\n"
      "Subtract and Result layers only). With --random, a dynamic dim takes the smallest positive\n"
      "size its interval allows (? -> 1, 2..7 -> 2); pass --input for other sizes.\n"
      "\n"
      "Examples:\n"
      "  $ sqdiff ir examples/ir/squared_difference_numpy.xml\n"
      "  $ sqdiff ir examples/ir/subtract_pdpd.xml --random 1 -o ir-out\n"
      "  $ sqdiff ir examples/ir/squared_difference_none.xml --random 1 -o ir-out\n"
      "  $ sqdiff ir examples/ir/squared_difference_none.xml --input a=ir-out/inputs/a.npy --input b=ir-out/inputs/b.npy\n"
      "  $ sqdiff ir examples/ir/dynamic_dims.xml --random 7\n"
      "\n"
      "See docs/ir.md.");
  sub->callback([args] { run_ir_command(*args); });
}

}  // namespace sqdiff::tools
