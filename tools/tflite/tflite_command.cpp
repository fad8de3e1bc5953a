#include "tflite/tflite_command.hpp"

#include <filesystem>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_checks.hpp"
#include "ir/ir_outputs.hpp"
#include "ir/ir_run.hpp"
#include "json_value.hpp"
#include "output_directory.hpp"
#include "path_text.hpp"
#include "tflite/operator_kind.hpp"
#include "tflite/tflite_model.hpp"
#include "tflite/tflite_run.hpp"
#include "tflite/tflite_tensors.hpp"

namespace sqdiff::tools {
namespace {

using namespace sqdiff::tools::tflite;

constexpr std::size_t kValuesShown = 8;

struct TfliteArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::optional<uint64_t> seed;
  std::string out_dir;
  int threads = 0;
  std::string tensors_dir;  // --tensors: each operator from the tensors in this directory
  bool json = false;
  bool timings = false;  // --timings: where the run's time went
};

// Milliseconds since `start`, for --timings.
std::string milliseconds_since(std::chrono::steady_clock::time_point start) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return text;
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", seconds * 1e3);
  return text;
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}


std::string model_line(const TfliteArgs& args, const Model& model) {
  return args.model + ": TFLite schema version " + std::to_string(model.version) + ", subgraph 0" +
         (model.subgraph_name.empty() ? "" : " \"" + model.subgraph_name + "\"") + " of " +
         std::to_string(model.subgraph_count) + ": " + plural(model.tensors.size(), "tensor") + ", " +
         plural(model.operators.size(), "operator");
}

JsonArray index_array(const std::vector<int32_t>& indices) {
  JsonArray array;
  for (const int32_t i : indices) array.emplace_back(int64_t{i});
  return array;
}

JsonArray runnable_kinds() {
  JsonArray kinds;
  const std::string names = runnable_operator_names();
  for (std::size_t start = 0; start < names.size();) {
    const std::size_t comma = names.find(", ", start);
    kinds.emplace_back(names.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? names.size() : comma + 2;
  }
  return kinds;
}

// --tensors DIR: every operator sqdiff runs, computed from DIR's tensors
// (tflite_tensors.hpp) and written as OUT/operator_<index>.npy; a report of
// what became of each operator, in text or JSON. Operators that cannot be
// computed are listed, not errors: the status is 1 only when something stops
// the whole (the model, a file in DIR, an output file).
void run_tensors_mode(const TfliteArgs& args) {
  const Model model = load_model(args.model);
  const CheckReport report = check_model(model);
  std::error_code error;
  if (!std::filesystem::is_directory(args.tensors_dir, error)) {
    throw TfliteError("--tensors " + args.tensors_dir + ": not a directory");
  }
  TensorsOptions options;
  options.dir = args.tensors_dir;
  options.compute = !args.out_dir.empty();
  options.threads = args.threads;
  std::optional<StagedDirectory> staged;
  if (options.compute) staged.emplace(args.out_dir);
  std::map<std::size_t, std::string> files;
  const std::vector<OperatorFromTensors> ops =
      compute_from_tensors(model, report, options, [&](const OperatorFromTensors& entry, const ir::Tensor& value) {
        const std::string relative = operator_file_name(entry.op);
        staged->write(relative, [&](const std::string& path) { ir::write_tensor(path, value); });
        files[entry.op] = staged->final_path(relative);
      });
  if (staged) staged->commit();

  std::map<TensorsStatus, std::size_t> counts;
  for (const OperatorFromTensors& entry : ops) ++counts[entry.status];
  auto tensor_files = [&](const std::vector<int32_t>& tensors) {
    std::string list;
    for (const int32_t t : tensors) {
      list += (list.empty() ? "" : ", ") + (std::filesystem::path(args.tensors_dir) / tensor_file_name(t)).string();
    }
    return list;
  };
  if (args.json) {
    JsonArray operators;
    for (const OperatorFromTensors& entry : ops) {
      const OperatorInfo& op = model.operators[entry.op];
      const OpCheck& check = report.ops[entry.op];
      JsonArray problems;
      for (const std::string& p : check.problems) problems.emplace_back(p);
      const auto file = files.find(entry.op);
      operators.emplace_back(JsonObject{
          {"index", static_cast<uint64_t>(entry.op)},
          {"kind", op.op_name()},
          {"status", status_name(entry.status)},
          {"inputs", index_array(op.inputs)},
          {"outputs", index_array(op.outputs)},
          {"read", index_array(entry.read)},
          {"missing", index_array(entry.missing)},
          {"summary", check.summary},
          {"problems", std::move(problems)},
          {"file", file == files.end() ? JsonValue() : JsonValue(file->second)},
      });
    }
    const JsonObject document{
        {"model", args.model},
        {"tensors", args.tensors_dir},
        {"output_dir", args.out_dir.empty() ? JsonValue() : JsonValue(args.out_dir)},
        {"runs", runnable_kinds()},
        {"operators", std::move(operators)},
        {"computed", static_cast<uint64_t>(counts[TensorsStatus::computed])},
        {"ready", static_cast<uint64_t>(counts[TensorsStatus::ready])},
        {"skipped", static_cast<uint64_t>(counts[TensorsStatus::skipped])},
        {"refused", static_cast<uint64_t>(counts[TensorsStatus::refused])},
        {"not_run", static_cast<uint64_t>(counts[TensorsStatus::not_run])},
    };
    std::cout << to_json_text(document) << '\n';
    return;
  }
  write_line(std::cout, model_line(args, model));
  for (const OperatorFromTensors& entry : ops) {
    if (entry.status == TensorsStatus::not_run) continue;
    const OperatorInfo& op = model.operators[entry.op];
    const OpCheck& check = report.ops[entry.op];
    std::string line = "operator " + std::to_string(op.index) + " " + op.op_name() + ": " + check.summary +
                       (check.summary.empty() ? "" : ": ");
    switch (entry.status) {
      case TensorsStatus::computed:
        line += "computed" + (entry.read.empty() ? std::string(" from constants") : " from " + tensor_files(entry.read)) +
                ": " + files[entry.op];
        break;
      case TensorsStatus::ready:
        line += "ready" + (entry.read.empty() ? std::string(" (constants only)") : " (" + tensor_files(entry.read) + ")");
        break;
      case TensorsStatus::skipped: {
        line += "skipped: no " + tensor_files(entry.missing) + " (";
        for (std::size_t i = 0; i < entry.missing.size(); ++i) {
          line += (i ? ", " : "") + model.describe_tensor(entry.missing[i]);
        }
        line += ")";
        break;
      }
      case TensorsStatus::refused: {
        line += "refused:";
        for (const std::string& p : check.problems) line += " " + p + (p.empty() || p.back() == '.' ? "" : ";");
        if (line.back() == ';') line.pop_back();
        break;
      }
      case TensorsStatus::not_run: break;
    }
    write_line(std::cout, line);
  }
  for (const std::string& kind : unsupported_messages(model, report)) {
    write_line(std::cout, "not run by sqdiff tflite: " + kind);
  }
  std::cout << "tensors: " << counts[TensorsStatus::computed] << " computed, " << counts[TensorsStatus::ready]
            << " ready, " << counts[TensorsStatus::skipped] << " skipped, " << counts[TensorsStatus::refused]
            << " refused, " << counts[TensorsStatus::not_run] << " not run by sqdiff tflite\n";
}

void run_tflite_command(const TfliteArgs& args) {
  if (!args.tensors_dir.empty()) {
    run_tensors_mode(args);
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  const Model model = load_model(args.model);
  // Every line that holds a path or a name from the file goes through write_line (path_text.hpp).
  write_line(std::cout, model_line(args, model));

  // 1. The check: every operator sqdiff runs in full, the others by kind.
  const CheckReport report = check_model(model);
  for (const OpCheck& check : report.ops) {
    if (!check.supported) continue;
    const OperatorInfo& op = model.operators[check.op];
    write_line(std::cout, "operator " + std::to_string(op.index) + " " + op.op_name() + ": " + check.summary +
                              (check.summary.empty() ? "" : ": ") + (check.ok() ? "ok" : "wrong"));
  }
  for (const std::string& kind : unsupported_messages(model, report)) {
    write_line(std::cout, "not run by sqdiff tflite: " + kind);
  }
  if (report.ops.empty()) std::cout << "no operators to check\n";
  std::cout.flush();
  const std::size_t unsupported = report.unsupported_count();
  if (report.problem_count() != 0) {
    std::size_t failed = 0, checked = 0;
    for (const OpCheck& check : report.ops) {
      if (!check.supported) continue;
      ++checked;
      if (!check.ok()) ++failed;
      for (const std::string& problem : check.problems) std::cerr << error_line(problem);
    }
    for (const std::string& problem : report.graph_problems) std::cerr << error_line(problem);
    if (unsupported != 0) std::cerr << error_line(args.model + ": " + unsupported_summary(model, report));
    throw TfliteError(args.model + ": check failed: " + plural(report.problem_count(), "problem") + " (" +
                      std::to_string(failed) + " of " + plural(checked, "operator") + " wrong" +
                      (report.graph_problems.empty() ? "" : ", " + plural(report.graph_problems.size(), "graph problem")) +
                      ")");
  }
  std::cout << "check: " << plural(report.ops.size() - unsupported, "operator") << " ok"
            << (unsupported == 0 ? "" : ", " + std::to_string(unsupported) + " that sqdiff tflite cannot run") << '\n';
  // A model with an operator sqdiff cannot run fails the check: it cannot be run, nor its
  // operators all checked.
  if (unsupported != 0) throw TfliteError(args.model + ": " + unsupported_summary(model, report));

  // 2. Running: only when asked for.
  const bool run = !args.inputs.empty() || args.seed.has_value() || !args.out_dir.empty();
  if (!run) return;
  RunOptions options;
  for (const std::string& item : args.inputs) {
    const std::size_t eq = item.find('=');
    options.inputs.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  options.seed = args.seed;
  options.threads = args.threads;
  // The output directory is checked before the model runs.
  std::optional<StagedDirectory> staged;
  if (!args.out_dir.empty()) staged.emplace(args.out_dir);
  const std::string read_and_checked = milliseconds_since(started);
  const RunOutput output = run_model(model, report, options);
  const auto written = std::chrono::steady_clock::now();

  // Every file is staged, then the set appears at once (as `sqdiff ir -o`).
  std::vector<std::string> input_files(output.inputs.size());
  std::vector<std::string> output_files(output.outputs.size());
  if (staged) {
    const std::vector<std::string> input_names = random_input_file_names(model, output);
    for (std::size_t k = 0, named = 0; k < output.inputs.size(); ++k) {
      if (!output.inputs[k].random) continue;
      const std::string relative = "inputs/" + input_names[named++];
      staged->write(relative, [&](const std::string& path) { ir::write_tensor(path, output.inputs[k].value); });
      input_files[k] = staged->final_path(relative);
    }
    const std::vector<std::string> output_names = output_file_names(model, output);
    for (std::size_t k = 0; k < output.outputs.size(); ++k) {
      staged->write(output_names[k], [&](const std::string& path) { ir::write_tensor(path, output.outputs[k].value); });
      output_files[k] = staged->final_path(output_names[k]);
    }
    staged->commit();
  }
  for (std::size_t k = 0; k < output.inputs.size(); ++k) {
    const InputValue& in = output.inputs[k];
    write_line(std::cout, "input " + model.describe_tensor(in.tensor) + ": " +
                              (in.random ? "random" + (input_files[k].empty() ? "" : ", saved as " + input_files[k])
                                         : in.file) +
                              ", " + std::string(sqdiff::dtype_name(in.value.dtype)) + " " +
                              shape_text(in.value.shape) + ": " + ir::format_values(in.value, kValuesShown));
  }
  for (std::size_t k = 0; k < output.outputs.size(); ++k) {
    const OutputValue& out = output.outputs[k];
    write_line(std::cout, "output " + model.describe_tensor(out.tensor) + ": " +
                              (output_files[k].empty() ? "" : output_files[k] + ", ") +
                              std::string(sqdiff::dtype_name(out.value.dtype)) + " " + shape_text(out.value.shape) +
                              ": " + ir::format_values(out.value, kValuesShown));
  }
  if (output.outputs.empty()) std::cout << "the model has no outputs: nothing to write\n";
  if (args.timings) {
    std::cout << "timings: model read and checked " << read_and_checked << ", inputs "
              << milliseconds(output.input_seconds) << ", operators " << milliseconds(output.operator_seconds)
              << ", files written " << milliseconds_since(written) << '\n';
  }
}

}  // namespace

void register_tflite_command(CLI::App& app) {
  auto args = std::make_shared<TfliteArgs>();
  CLI::App* sub = app.add_subcommand(
      "tflite", "Check a .tflite (LiteRT) model's operators and run it as LiteRT's reference kernels do");
  sub->add_option("model", args->model, "The .tflite model file")->required();
  CLI::Option* input = sub->add_option("--input", args->inputs,
                  "NAME=FILE.npy: data for the model's input tensor called NAME (repeat for each input)")
      ->allow_extra_args(false)
      ->check(name_equals_file("an input tensor's name"));
  CLI::Option* random = sub->add_option("--random", args->seed,
                  "Random data for every input without --input, from this seed (same seed, same data)")
      ->check(fits_in<uint64_t>());
  sub->add_option("-o,--output-dir", args->out_dir,
                  "Run the model and write each output as DIR/<tensor name>.npy (random inputs: DIR/inputs/)");
  sub->add_option("--threads", args->threads, "Threads for the computation (0: the library's default)")
      ->check(integer_in<int>(0, std::numeric_limits<int>::max()));
  sub->add_flag("--timings", args->timings,
                "After a run, print where its time went: reading and checking the model, the inputs, the "
                "operators (their outputs' allocation included), writing the files");
  CLI::Option* tensors =
      sub->add_option("--tensors", args->tensors_dir,
                      "DIR of <tensor index>.npy files: compute each operator sqdiff runs from these tensors "
                      "(and the model's constants) instead of running the model; with -o, write each as "
                      "DIR/operator_<index>.npy")
          ->excludes(input)
          ->excludes(random);
  sub->add_flag("--json", args->json, "With --tensors: print one JSON object instead of text (docs/tflite.md)")
      ->needs(tensors);
  sub->footer(
      "Without --input, --random or -o, only the check runs: every operator of the main subgraph\n"
      "that sqdiff tflite runs (see docs/tflite.md for the kinds and types; NumPy broadcasting;\n"
      "per-tensor quantization; fused activations NONE, RELU, RELU_N1_TO_1, RELU6), and the graph.\n"
      "Operators of other kinds are listed by kind. The exit status is 0 only when the whole model\n"
      "can run: 1 for a problem (each named with its operator) or an operator sqdiff cannot run.\n"
      "\n"
      "With --input, --random or -o, the model is also run, bit for bit as LiteRT's reference\n"
      "kernels. --random draws float32 and float16 from a standard normal distribution and\n"
      "integers uniformly over their type's range.\n"
      "\n"
      "Examples:\n"
      "  $ flatc -b tools/tflite/tflite_subset.fbs examples/tflite/sub_int8.json\n"
      "  $ sqdiff tflite sub_int8.tflite\n"
      "  $ sqdiff tflite sub_int8.tflite --random 1 -o tflite-out\n"
      "  $ sqdiff tflite sub_int8.tflite --input a=tflite-out/inputs/a.npy -o tflite-out2\n"
      "\n"
      "With --tensors DIR, each operator sqdiff runs is computed on its own from DIR/<tensor index>.npy\n"
      "files (a runtime's intermediate tensors: sqdiff.verify) and the model's constants, not from\n"
      "a run; -o OUT writes OUT/operator_<index>.npy. Operators whose inputs DIR lacks, that the\n"
      "check refuses or that sqdiff does not run are listed; --json prints the report as JSON.\n"
      "\n"
      "See docs/tflite.md.");
  sub->callback([args] { run_tflite_command(*args); });
}

}  // namespace sqdiff::tools
