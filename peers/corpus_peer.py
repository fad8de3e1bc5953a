"""Converter-made models and published models (issue 32, item 4): `sqdiff tflite` on .tflite
files that the project did not write by hand.

The converter-made corpus: the models peers/converter_corpus.py had TensorFlow's converter write
(scripts/converter_corpus.sh, in its own venv) into $SQDIFF_CORPUS_DIR. Each is run on inputs
drawn from its seed by LiteRT's builtin reference kernels (BUILTIN_REF), by LiteRT's default
resolver (the XNNPACK delegate) and by TFLite-Micro, each in a forked child
(litert_quantized_peer.run_isolated: an abort is recorded, not fatal), and by
`sqdiff tflite --input ... -o DIR`. For each model: its operators; whether the reference
kernels run it; whether sqdiff runs it, or the one line of its refusal; where both run, how many
elements differ (0, or the test fails); the default resolver's and TFLite-Micro's results
against the reference kernels'.

The published models: every .tflite file of the mediapipe wheel pinned in
requirements/published_models.txt, extracted into $SQDIFF_PUBLISHED_DIR: `sqdiff tflite MODEL`
(the check) names every operator of subgraph 0, one line per kind it cannot run, and never
crashes.

KINDS_SQDIFF_LACKS below is the one list of operator kinds the corpus holds and `sqdiff tflite`
does not run yet: a model is refused exactly when it holds one. When a kind lands, take it out of
the list; its models must then run, identical to the reference kernels.
"""

import collections
import functools
import hashlib
import json
import os
import pathlib
import re
import subprocess
import tempfile

import numpy as np
from ai_edge_litert import schema_py_generated as schema

import litert_quantized_peer

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Operator kinds that converter-made models hold and `sqdiff tflite` cannot run yet. The one
# place to change when sqdiff learns a kind (QUANTIZE, DEQUANTIZE and MEAN are on their way).
KINDS_SQDIFF_LACKS = ()

RUNTIMES = ("litert-reference", "litert-default", "tflite-micro")
TITLES = litert_quantized_peer.TITLES
TFLM_ARENA = 1 << 20
NUMPY_OF = {"FLOAT32": np.float32, "INT32": np.int32, "INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}
BUILTIN_NAMES = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}
TENSOR_TYPES = {value: name for name, value in vars(schema.TensorType).items() if not name.startswith("_")}
SECTION = "Converter-made models and published models"


def corpus_dir():
    return pathlib.Path(os.environ.get("SQDIFF_CORPUS_DIR", ROOT / "build-peers" / "corpus"))


def published_dir():
    return pathlib.Path(os.environ.get("SQDIFF_PUBLISHED_DIR", ROOT / "build-peers" / "published"))


def cli():
    if os.environ.get("SQDIFF_CLI"):
        return os.environ["SQDIFF_CLI"]
    import sqdiff
    return str(pathlib.Path(sqdiff.__file__).resolve().parents[2] / "tools" / "sqdiff")


def manifest():
    path = corpus_dir() / "manifest.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no converter-made corpus; scripts/compatibility.sh makes it "
                                "(scripts/converter_corpus.sh)")
    return json.loads(path.read_text())


# ---------------------------------------------------------------------------------------------
# Reading a model: subgraph 0's operators and I/O tensors, from the schema LiteRT ships.

def operator_name(model, operator):
    code = model.operatorCodes[operator.opcodeIndex]
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    if builtin == schema.BuiltinOperator.CUSTOM:
        custom = code.customCode.decode() if isinstance(code.customCode, bytes) else code.customCode
        return f'CUSTOM "{custom}"'
    return BUILTIN_NAMES.get(builtin, f"builtin operator {builtin}")


def describe(data):
    """{"operators": [names of subgraph 0's operators], "inputs"/"outputs": [(name, type, shape)]}."""
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    subgraph = model.subgraphs[0]

    def tensor(index):
        t = subgraph.tensors[index]
        name = t.name.decode() if isinstance(t.name, bytes) else t.name
        shape = [] if t.shape is None else [int(d) for d in t.shape]
        return name, TENSOR_TYPES[t.type], shape

    def quant(index):
        q = subgraph.tensors[index].quantization
        if q is None or q.scale is None or len(q.scale) != 1:
            return None
        return float(q.scale[0]), int(q.zeroPoint[0])

    # RELU6 operators whose output is quantized otherwise than their input (TFLite-Micro's RELU6
    # clamps in the input's quantization and writes that: corpus_peer's note).
    rescaling_relu6 = [i for i, op in enumerate(subgraph.operators or [])
                       if operator_name(model, op) == "RELU6" and quant(op.inputs[0]) is not None
                       and quant(op.inputs[0]) != quant(op.outputs[0])]
    return {"operators": [operator_name(model, op) for op in (subgraph.operators or [])],
            "rescaling_relu6": rescaling_relu6,
            "inputs": [tensor(i) for i in subgraph.inputs], "outputs": [tensor(i) for i in subgraph.outputs],
            "subgraphs": len(model.subgraphs)}


def draw_inputs(entry, inputs):
    """The inputs of one corpus model, from its seed: float32 uniform over the manifest's range,
    int32 over its range, int8 / uint8 / int16 over the whole type."""
    rng = np.random.default_rng(entry["seed"])
    arrays = []
    for _, type_name, shape in inputs:
        dtype = NUMPY_OF[type_name]
        if type_name == "FLOAT32":
            low, high = entry["input_range"]
            arrays.append(rng.uniform(low, high, shape).astype(np.float32))
        else:
            low, high = entry["input_range"] if type_name == "INT32" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
            arrays.append(rng.integers(low, high, shape, endpoint=True).astype(dtype))
    return arrays


# ---------------------------------------------------------------------------------------------
# The runtimes, each called in litert_quantized_peer.run_isolated's forked child.

def _litert(resolver):
    def run(model, inputs):
        from ai_edge_litert import interpreter as litert
        runner = litert.Interpreter(model_content=model, num_threads=1, experimental_op_resolver_type=resolver)
        runner.allocate_tensors()
        for detail, array in zip(runner.get_input_details(), inputs):
            runner.set_tensor(detail["index"], array)
        runner.invoke()
        delegated = any(op["op_name"] == "DELEGATE" for op in runner._get_ops_details())
        outputs = [np.array(runner.get_tensor(d["index"]), copy=True) for d in runner.get_output_details()]
        return outputs, delegated
    return run


def _tflite_micro(model, inputs):
    from tflite_micro.python.tflite_micro import runtime as tflm
    runner = tflm.Interpreter.from_bytes(model, arena_size=TFLM_ARENA)
    for i, array in enumerate(inputs):
        runner.set_input(array, i)
    runner.invoke()
    outputs, i = [], 0
    while True:
        try:
            runner.get_output_details(i)
        except Exception:  # noqa: BLE001 - past the last output
            break
        outputs.append(np.array(runner.get_output(i), copy=True))
        i += 1
    return outputs, False


def _runners():
    from ai_edge_litert import interpreter as litert
    return {"litert-reference": _litert(litert.OpResolverType.BUILTIN_REF),
            "litert-default": _litert(litert.OpResolverType.AUTO), "tflite-micro": _tflite_micro}


# ---------------------------------------------------------------------------------------------
# sqdiff tflite.

def file_name(name):
    """The file `sqdiff tflite -o` writes for a tensor name (docs/tflite.md, "Output files")."""
    text = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if text.startswith("."):
        text = "_" + text
    return (text or "result") + ".npy"


CANNOT_RUN = re.compile(r"cannot run \d+ operators? of \d+ kinds? \(([^)]*)\)")


def sqdiff_tflite(path, description, inputs, work):
    """Runs `sqdiff tflite PATH --input ... -o DIR`: ("ran", [outputs]) or ("refused", the first
    error line, [the kinds it cannot run]); a crash (a signal) is ("crashed", ...)."""
    args = [cli(), "tflite", str(path)]
    for (name, _, _), array in zip(description["inputs"], inputs):
        file = work / f"input{len(args)}.npy"
        np.save(file, array)
        args += ["--input", f"{name}={file}"]
    out = work / "out"
    done = subprocess.run(args + ["-o", str(out)], capture_output=True, text=True, timeout=300)
    if done.returncode < 0:
        return "crashed", f"signal {-done.returncode}", []
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("sqdiff: error:")]
        line = errors[0] if errors else (done.stderr.strip().splitlines() or ["no message"])[-1]
        line = line.replace(str(path), path.name)
        match = CANNOT_RUN.search(line)
        kinds = [part.rsplit(" x ", 1)[0] for part in match.group(1).split(", ")] if match else []
        return "refused", line, kinds
    names = [file_name(name) for name, _, _ in description["outputs"]]
    return "ran", [np.load(out / name) for name in names], []


# ---------------------------------------------------------------------------------------------
# Comparing outputs.

def _bits(array):
    array = np.ascontiguousarray(array)
    return array.view(np.uint32) if array.dtype == np.float32 else array


def differing(ours, theirs):
    """(elements, differing elements, largest difference of float32 outputs, of integer outputs
    in steps), bit for bit; a largest difference of -1: another shape, type or output count."""
    if len(ours) != len(theirs):
        return 0, 1, -1.0, -1
    elements = count = steps = 0
    largest = 0.0
    for x, y in zip(ours, theirs):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return int(x.size), int(x.size), -1.0, -1
        x, y = x.reshape(-1), y.reshape(-1)
        elements += int(x.size)
        mask = _bits(x) != _bits(y)
        count += int(mask.sum())
        if mask.any():
            gap = np.max(np.abs(x[mask].astype(np.float64) - y[mask].astype(np.float64)))
            if x.dtype == np.float32:
                largest = max(largest, float(gap))
            else:
                steps = max(steps, int(gap))
    return elements, count, largest, steps


def _plain(text):
    return litert_quantized_peer._plain(text)


def run_corpus():
    """{model name: record} for every model of the manifest (converter refusals too)."""
    spec = manifest()
    directory = corpus_dir()
    models = {}
    for name, entry in spec["models"].items():
        record = {"recipe": entry["recipe"], "type": entry["type"]}
        if "converter_error" in entry:
            record["converter"] = entry["converter_error"]
            models[name] = record
            continue
        data = (directory / entry["file"]).read_bytes()
        description = describe(data)
        record.update(operators=description["operators"], sha256=hashlib.sha256(data).hexdigest(),
                      manifest_sha256=entry["sha256"], rescaling_relu6=description["rescaling_relu6"])
        models[name] = record
        models[name]["_run"] = (directory / entry["file"], data, description, draw_inputs(entry, description["inputs"]))
    runnable = [name for name, record in models.items() if "_run" in record]
    jobs = [(models[n]["_run"][1], models[n]["_run"][3]) for n in runnable]
    runners = _runners()
    results = {runtime: litert_quantized_peer.run_isolated(runners[runtime], jobs) for runtime in RUNTIMES}
    with tempfile.TemporaryDirectory() as work:
        for k, name in enumerate(runnable):
            record = models[name]
            path, _, description, inputs = record.pop("_run")
            reference = results["litert-reference"][k]
            record["reference"] = reference[0] if reference[0] == "ran" else f"{reference[0]}: {reference[1]}"
            where = pathlib.Path(work) / str(k)
            where.mkdir()
            kind, *rest = sqdiff_tflite(path, description, inputs, where)
            ours = rest[0] if kind == "ran" else None
            if kind == "ran":
                record["sqdiff"] = "ran"
                if reference[0] == "ran":
                    elements, count, _, _ = differing(ours, reference[1])
                    record.update(elements=elements, sqdiff_differing=count)
            else:
                record["sqdiff"] = f"{kind}: {rest[0]}"
                record["sqdiff_missing_kinds"] = rest[1]
            # The other runtimes against the reference kernels; where those refuse the model,
            # against sqdiff (int16 SQUARED_DIFFERENCE, which LiteRT lacks).
            against, expected = (("reference", reference[1]) if reference[0] == "ran"
                                 else ("sqdiff", ours) if ours is not None else (None, None))
            for runtime in ("litert-default", "tflite-micro"):
                theirs = results[runtime][k]
                if theirs[0] != "ran":
                    record[runtime] = f"{theirs[0]}: {theirs[1]}"
                elif against is not None:
                    elements, count, largest, steps = differing(theirs[1], expected)
                    record[runtime] = {"against": against, "elements": elements, "differing": count,
                                       "largest": largest, "largest_steps": steps, "delegated": bool(theirs[2])}
                else:
                    record[runtime] = "ran (nothing to compare with)"
    return models


# ---------------------------------------------------------------------------------------------
# Published models.

def published_files():
    return sorted((published_dir() / "models").glob("**/*.tflite"))


NOT_RUN = re.compile(r"^not run by sqdiff tflite: (.+) x (\d+) \(operators? [^)]*\)$")
RUNS = re.compile(r"^operator (\d+) (.+?): .*: (ok|wrong)$")


def run_published():
    """{file: record}: `sqdiff tflite FILE` (the check) against the schema's own reading."""
    out = {}
    root = published_dir() / "models"
    for path in published_files():
        data = path.read_bytes()
        description = describe(data)
        done = subprocess.run([cli(), "tflite", str(path)], capture_output=True, text=True, timeout=300)
        lines = done.stdout.splitlines()
        not_run = {}
        for line in lines:
            match = NOT_RUN.match(line)
            if match:
                not_run.setdefault(match.group(1), []).append(int(match.group(2)))
        checked = [RUNS.match(line) for line in lines]
        checked = [m for m in checked if m]
        kinds = collections.Counter(description["operators"])
        out[str(path.relative_to(root))] = {
            "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(), "subgraphs": description["subgraphs"],
            "exit": done.returncode, "operators": len(description["operators"]),
            "kinds": dict(sorted(kinds.items())),
            "sqdiff_not_run": {k: v for k, v in sorted(not_run.items())},
            "sqdiff_checked": dict(sorted(collections.Counter(m.group(2) for m in checked).items())),
            "sqdiff_wrong": sum(m.group(3) == "wrong" for m in checked),
            "header": lines[0].replace(str(path), path.name) if lines else "",
            "last_error": next((line.replace(str(path), path.name) for line in reversed(done.stderr.splitlines())
                                if line.startswith("sqdiff: error:")), ""),
            "unnamed": sorted({line for line in lines if "builtin operator " in line}),
        }
    return out


def versions():
    import importlib.metadata
    spec = manifest()
    wheels = sorted(p.name for p in (published_dir() / "wheel").glob("*.whl"))
    return {"converter versions": ", ".join(f"{k} {v}" for k, v in sorted(spec["versions"].items())),
            "ai-edge-litert": importlib.metadata.version("ai-edge-litert"),
            "tflite-micro": importlib.metadata.version("tflite-micro"),
            "published models": ", ".join(wheels)}


# ---------------------------------------------------------------------------------------------
# One run, its signature (what tests/peers/test_compatibility.py compares) and its section of
# docs/COMPATIBILITY.md.

@functools.lru_cache(maxsize=None)
def collect():
    """{"corpus": {model: record}, "published": {file: record}, "manifest": {...}}: one run per
    process (generate.py and the tests share it)."""
    spec = manifest()
    return {"corpus": run_corpus(), "published": run_published(),
            "manifest": {"seed": spec["seed"], "versions": spec["versions"], "types": spec["types"],
                         "recipes": spec["recipes"],
                         "calibration_samples": spec["calibration_samples"],
                         "programs": {e["recipe"]: e["program"] for e in spec["models"].values()}}}


def sqdiff_outcome(record):
    """"ran", or "refused: KIND, KIND" (the kinds it lacks), or the refusal's own text."""
    if record["sqdiff"] == "ran":
        return "ran"
    if record.get("sqdiff_missing_kinds"):
        return "refused: " + ", ".join(sorted(record["sqdiff_missing_kinds"]))
    return record["sqdiff"]


def _runtime_signature(value):
    if isinstance(value, dict):
        return {k: value[k] for k in ("against", "elements", "differing", "largest", "largest_steps", "delegated")}
    return value


def signature(data):
    sig = {}
    for name, record in data["corpus"].items():
        if "converter" in record:
            sig[f"corpus: {name}"] = {"converter": record["converter"]}
            continue
        sig[f"corpus: {name}"] = {
            "sha256": record["sha256"], "operators": record["operators"], "reference": record["reference"],
            "sqdiff": sqdiff_outcome(record), "elements": record.get("elements"),
            "sqdiff_differing": record.get("sqdiff_differing"),
            **{runtime: _runtime_signature(record.get(runtime)) for runtime in ("litert-default", "tflite-micro")}}
    for name, record in data["published"].items():
        sig[f"published: {name}"] = {k: record[k] for k in ("sha256", "operators", "kinds", "exit", "sqdiff_checked",
                                                            "sqdiff_not_run", "sqdiff_wrong", "unnamed")}
    return sig


def _operators_text(operators):
    """"QUANTIZE x2, SUB, DEQUANTIZE": the operators in order, repeats folded."""
    parts = []
    for name in operators:
        if parts and parts[-1][0] == name:
            parts[-1][1] += 1
        else:
            parts.append([name, 1])
    return ", ".join(name if n == 1 else f"{name} x{n}" for name, n in parts)


def _kinds_text(kinds):
    return ", ".join(f"{name} {count}" for name, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def _cell(record, footnotes):
    if "converter" in record:
        footnotes.setdefault(record["converter"], len(footnotes) + 1)
        return f"converter refuses [{footnotes[record['converter']]}]"
    text = _operators_text(record["operators"])
    outcome = sqdiff_outcome(record)
    if record["reference"] != "ran":
        reason = re.sub(r"Node number \d+", "Node number N", record["reference"].split(": ", 1)[1])
        footnotes.setdefault(reason, len(footnotes) + 1)
        word = "refuses" if record["reference"].startswith("refused") else "aborts"
        text += f"<br>LiteRT {word} [{footnotes[reason]}]"
    if outcome == "ran":
        if "sqdiff_differing" in record:
            text += ("<br>sqdiff: **identical**" if record["sqdiff_differing"] == 0
                     else f"<br>sqdiff: {record['sqdiff_differing']}/{record['elements']} differ")
        else:
            text += "<br>sqdiff runs it"
    elif outcome.startswith("refused: "):
        text += "<br>sqdiff lacks " + outcome[len("refused: "):]
    else:
        text += f"<br>sqdiff: {outcome}"
    return text


def _models(names):
    return ", ".join(f"`{n}`" for n in names)


def _runtime_rows(corpus):
    rows = []
    for runtime in ("litert-default", "tflite-micro"):
        values = {n: r[runtime] for n, r in corpus.items() if runtime in r}
        compared = {n: v for n, v in values.items() if isinstance(v, dict)}
        differing = {n: v for n, v in compared.items() if v["differing"]}
        failed = collections.Counter(v.split(": ", 1)[0] for v in values.values()
                                     if isinstance(v, str) and not v.startswith("ran"))
        uncompared = sum(isinstance(v, str) and v.startswith("ran") for v in values.values())
        elements = sum(v["elements"] for v in compared.values())
        largest = max((v["largest"] for v in differing.values()), default=0)
        steps = max((v["largest_steps"] for v in differing.values()), default=0)
        not_run = ", ".join(f"{kind} {n}" for kind, n in sorted(failed.items())) or "0"
        rows.append(f"| {TITLES[runtime]} | {len(compared)} | {elements} | {len(differing)} | "
                    f"{sum(v['differing'] for v in differing.values())} | {largest:.9g} | {steps} | {not_run} | "
                    f"{uncompared} |")
    return rows


def explanations(corpus):
    """{runtime: (explained models, the rest)}: each differing model under the rule that explains
    it, so that a note never claims more than the run shows (tested)."""
    out = {}
    for runtime, rule in (("litert-default", lambda r: "MEAN" in r["operators"] and r[runtime]["delegated"]),
                          ("tflite-micro", lambda r: bool(r.get("rescaling_relu6")))):
        differing = [n for n, r in corpus.items() if isinstance(r.get(runtime), dict) and r[runtime]["differing"]]
        explained = [n for n in differing if rule(corpus[n])]
        out[runtime] = (explained, [n for n in differing if n not in explained])
    return out


def markdown(data, version):
    corpus, published, spec = data["corpus"], data["published"], data["manifest"]
    made = {n: r for n, r in corpus.items() if "converter" not in r}
    reference_ran = [n for n, r in made.items() if r["reference"] == "ran"]
    sqdiff_ran = [n for n, r in made.items() if r["sqdiff"] == "ran"]
    both = [n for n in sqdiff_ran if "sqdiff_differing" in made[n]]
    sqdiff_only = [n for n in sqdiff_ran if n not in both]
    identical = [n for n in both if made[n]["sqdiff_differing"] == 0]
    refused = collections.defaultdict(list)
    for n, r in made.items():
        if r["sqdiff"] != "ran":
            refused[sqdiff_outcome(r)].append(n)
    kinds = [kind for kind, _ in spec["types"]]
    recipes = spec["recipes"]
    lines = [f"## {SECTION}", "",
             "Versions: " + "; ".join(f"{k} {v}" for k, v in version.items()) + ".", "",
             "### Converter-made models", "",
             "`scripts/converter_corpus.sh` has TensorFlow's own converter (`tf.lite.TFLiteConverter`, pinned in "
             "requirements/converter.txt, in a venv of its own) write every recipe below in every type "
             f"(peers/converter_corpus.py, seed {spec['seed']}): float32; int32; full-integer int8 from a "
             f"representative dataset ({spec['calibration_samples']} samples) with int8, uint8 and float I/O; "
             "16x8 with int16 and float I/O. Each model's inputs are drawn from its own seed: float32 uniform over "
             "[-4, 4] (the representative dataset's range), int32 over [-100, 100], int8, uint8 and int16 over the "
             "whole type. LiteRT's builtin reference kernels (BUILTIN_REF), its default resolver (the XNNPACK "
             "delegate) and TFLite-Micro run each model in a forked child (an abort is recorded, not fatal); "
             "`sqdiff tflite --input ... -o DIR` runs it too; every element is compared bit for bit. The converter "
             "writes the same bytes on every run (each file's sha256 is part of the recorded figures).", "",
             "What the converter emits (subgraph 0's operators in order) and what became of it:", "",
             "| recipe | program | " + " | ".join(kinds) + " |", "|---|---|" + "---|" * len(kinds)]
    footnotes = {}
    for recipe in recipes:
        cells = [_cell(corpus[f"{recipe}-{kind}"], footnotes) for kind in kinds]
        lines.append(f"| {recipe} | {spec['programs'][recipe]} | " + " | ".join(cells) + " |")
    lines.append("")
    for text, number in footnotes.items():
        lines.append(f"[{number}] `{text}`  ")
    lines += ["", "Types: " + "; ".join(f"**{k}**: {v}" for k, v in spec["types"]) + ".", "",
              "| | models |", "|---|---|",
              f"| recipes x types | {len(corpus)} |",
              f"| made by the converter | {len(made)} ({len(corpus) - len(made)} refused by the converter) |",
              f"| run by LiteRT's reference kernels | {len(reference_ran)} |",
              f"| run by `sqdiff tflite` | {len(sqdiff_ran)} |",
              f"| run by both | {len(both)}: {len(identical)} identical, "
              f"{sum(made[n]['sqdiff_differing'] for n in both)} differing elements of "
              f"{sum(made[n]['elements'] for n in both)} |",
              f"| run by `sqdiff tflite`, refused by the reference kernels | {len(sqdiff_only)} |"]
    for outcome, names in sorted(refused.items()):
        lines.append(f"| {outcome.replace('refused: ', 'refused by `sqdiff tflite`, lacking ')} | {len(names)} |")
    per_kind = collections.Counter(k for r in made.values() for k in r.get("sqdiff_missing_kinds", []))
    lines.append("| refused by `sqdiff tflite`, per kind it lacks (a model lacking two counts under both) | "
                 + ", ".join(f"{k} {n}" for k, n in sorted(per_kind.items())) + " |")
    lines += ["", "The default resolver and TFLite-Micro against the reference kernels (against sqdiff where the "
              "reference kernels refuse the model and sqdiff runs it): models compared, their elements, models "
              "and elements that differ, the largest difference of a float32 output and of an integer output (in "
              "steps of its quantization), "
              "the models the runtime did not run, and those it ran that neither the reference kernels nor sqdiff "
              "run (nothing to compare with):", "",
              "| runtime | models | elements | differing models | differing elements | largest (float32) | "
              "largest (steps) | not run | run alone |", "|---|---|---|---|---|---|---|---|---|"]
    lines += _runtime_rows(made)
    lines.append("")
    why = explanations(made)
    default_mean, default_other = why["litert-default"]
    micro_relu6, micro_other = why["tflite-micro"]
    delegated = [n for n in made if isinstance(made[n].get("litert-default"), dict)
                 and made[n]["litert-default"]["delegated"]]
    micro_failed = sorted(n for n in made if isinstance(made[n].get("tflite-micro"), str)
                          and not made[n]["tflite-micro"].startswith("ran"))
    int16_sqd = [n for n in sqdiff_only if "SQUARED_DIFFERENCE" in made[n]["operators"]]
    micro_on_int16 = [n for n in int16_sqd if isinstance(made[n].get("tflite-micro"), dict)]
    lines += [
        "Why:", "",
        f"- **sqdiff**: wherever it and the reference kernels both run a model, every element is identical "
        f"({len(identical)} of {len(both)} models; `tests/peers/test_converter_corpus.py` fails on one differing "
        "element). "
        + (f"It refuses exactly the models that hold an operator kind it does not run yet "
           f"({', '.join(KINDS_SQDIFF_LACKS)}: `KINDS_SQDIFF_LACKS` in peers/corpus_peer.py, the one list the test "
           "reads), with the one line `cannot run N operators of K kinds (...)`"
           if KINDS_SQDIFF_LACKS else
           f"It runs {len(sqdiff_ran)} of the {len(made)} models the converter made and refuses "
           f"{sum(len(v) for v in refused.values())}: every operator kind the converter writes for these programs is "
           "one it runs (`KINDS_SQDIFF_LACKS` in peers/corpus_peer.py, the one list of kinds the test lets it refuse, "
           "is empty)")
        + "; the converter's float I/O wraps every quantized graph in QUANTIZE and DEQUANTIZE, uint8 I/O in "
        "QUANTIZE (uint8 to int8 and back), `tf.reduce_mean` is MEAN and `tf.clip_by_value` of a squared "
        "difference a RELU6 of its own.",
        f"- **int16 SQUARED_DIFFERENCE**: the 16x8 recipes give SQUARED_DIFFERENCE on int16, which LiteRT "
        "does not run (`SquaredDifference only supports FLOAT32 and INT32 now, got 7`, in the reference kernels "
        f"and the default resolver alike): {len(int16_sqd)} models run by sqdiff and not by LiteRT, "
        f"{_models(int16_sqd)}. TFLite-Micro runs {len(micro_on_int16)} of them, "
        + ("every element identical to sqdiff" if all(made[n]["tflite-micro"]["differing"] == 0 for n in micro_on_int16)
           else "with differences") + " (SPEC 9).",
        f"- **Broadcasts past rank 4**: the converter keeps SQUARED_DIFFERENCE up to rank 4 and writes the rank 5 "
        "and 6 squared differences as SUB then SQUARE (float32; int32: SUB then MUL; int8: SUB, then SQUARE in "
        "float32 between DEQUANTIZE and QUANTIZE), and refuses them in 16x8 (`Quantization to 16x8-bit not yet "
        "supported for op: 'SQUARE'`); SUB stays one operator at every rank.",
        f"- **Default resolver**: the XNNPACK delegate took {len(delegated)} models. "
        + (f"{len(default_mean)} differ, each with a MEAN the delegate took ({_models(default_mean)}): XNNPACK's "
           "float32 mean adds in its own order (vector lanes) and multiplies the sum by the float32 reciprocal "
           "1/n (`update_params_mean_f32`), where the reference kernel adds in order and divides by n (a last "
           "place apart); its int8 mean (`xnn_create_mean_nd_qs8`) rescales the int32 sum by the float32 "
           "quotient of the scales and rounds to nearest even, where the reference kernel's "
           "`QuantizedMeanOrSum` multiplies in fixed point (a step apart). "
           if default_mean else "None differs. ")
        + (f"Not explained: {_models(default_other)}." if default_other else
           f"The other {len(delegated) - len(default_mean)} models the delegate took are identical, and so are "
           "those it declined (LiteRT's builtin optimized kernels ran them)."),
        f"- **TFLite-Micro**: "
        + (f"{len(micro_relu6)} models differ, each with a RELU6 whose output is quantized otherwise than its "
           f"input ({_models(micro_relu6)}: the converter gives the RELU6 after a squared difference an output "
           "scale for [0, 6], its input the squared difference's, far wider): TFLite-Micro's `Relu6Prepare` takes zero "
           "and six in the input's quantization and its RELU6 clamps and writes the input's steps unchanged, "
           "never requantizing to the output's scale; LiteRT's reference RELU6 (`QuantizedReluX`) requantizes "
           "first. So TFLite-Micro's elements are the input's steps read in the output's scale: up to "
           f"{max(made[n]['tflite-micro']['largest_steps'] for n in micro_relu6)} steps off here, a "
           "bug of TFLite-Micro's. "
           if micro_relu6 else "None differs. ")
        + (f"Not explained: {_models(micro_other)}. " if micro_other else "")
        + (f"It does not run {_models(micro_failed)}: its MEAN has no int32 kernel (`reduce_common.cc`: "
           "\"only float32, int8 or int16 input type is supported\"; the invoke fails)." if micro_failed else ""),
        ""]
    lines += ["### Published models", "",
              "Every .tflite file of the mediapipe wheel pinned in requirements/published_models.txt (downloaded "
              "with `pip download --no-deps`, not installed), read by `sqdiff tflite MODEL` (the check): it names "
              "every operator of subgraph 0 as LiteRT's schema does (a builtin by its name, a custom operator as "
              "`CUSTOM \"code\"`), one line per kind it cannot run, and exits with 1 when the model holds one "
              "(`tests/peers/test_published_models.py`: never a signal, never `builtin operator N` for a code the "
              "schema names). Columns: operators of subgraph 0; their kinds (with counts); the operators sqdiff "
              "checks and could run; exit status.", "",
              "| model | bytes | operators | kinds | sqdiff runs | exit |", "|---|---|---|---|---|---|"]
    for name, record in published.items():
        runs = sum(record["sqdiff_checked"].values())
        runs_text = f"{runs} ({_kinds_text(record['sqdiff_checked'])})" if runs else "0"
        lines.append(f"| {name} | {record['bytes']} | {record['operators']} | {_kinds_text(record['kinds'])} | "
                     f"{runs_text} | {record['exit']} |")
    sparse = [n for n, r in published.items() if "DENSIFY" in r["kinds"]]
    lines += ["", f"{len(published)} models, {sum(r['operators'] for r in published.values())} operators of "
              f"{len({k for r in published.values() for k in r['kinds']})} kinds; every model holds operators "
              "sqdiff does not run (convolutions, pooling, DEQUANTIZE of float16 weights, custom operators), so "
              "each check ends with exit status 1 and one line per kind. "
              + (f"{_models(sparse)} keep sparse float16 weights (`Tensor.sparsity`, expanded by DENSIFY): "
                 "`sqdiff tflite` had refused both whole for their short buffers before it read a sparse "
                 "constant as such." if sparse else "")]
    return "\n".join(lines)


def run():
    data = collect()
    # The per-model figures are the signature's; the page is its markdown.
    return {"extra": {"signature": signature(data), "markdown": markdown(data, versions())}}
