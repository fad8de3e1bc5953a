"""The converter-made corpus (issue 32, item 4): .tflite models that TensorFlow's own converter
(`tf.lite.TFLiteConverter`, the version pinned in requirements/converter.txt) writes from
programs built of `tf.math.squared_difference` and `tf.subtract`, every recipe crossed with every
type: float32, int32, full-integer int8 (int8, uint8 and float I/O) and 16x8 (int16 and float I/O)
quantization from a representative dataset.

    build-peers/converter-venv/bin/python peers/converter_corpus.py OUT_DIR [--jobs N]

Writes OUT_DIR/<name>.tflite and OUT_DIR/manifest.json (the recipe, type, seed and the inputs
to draw of each model; the versions that wrote them). Everything comes from the fixed SEED:
the same files on every run. It runs in the converter's venv (TensorFlow needs NumPy >= 1.26,
the peers' venv has Debian's 1.24), imports nothing of sqdiff, and is run by
scripts/converter_corpus.sh; peers/corpus_peer.py runs the models in the peers' venv.
"""

import argparse
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import zlib

SEED = 20261202
CALIBRATION_SAMPLES = 16
# The inputs a model is run on (corpus_peer.py draws them) and its representative dataset.
FLOAT_RANGE = (-4.0, 4.0)
INT32_RANGE = (-100, 100)  # squares and the mean's sums stay far from int32's bounds

# The shapes of a and b where a recipe does not broadcast.
SAME = ([2, 3, 4], [2, 3, 4])


def _graphs(tf, keras):
    def clip(x, low, high):
        return tf.clip_by_value(x, tf.cast(low, x.dtype), tf.cast(high, x.dtype))

    def minmax(x, low, high):
        return tf.minimum(tf.maximum(x, tf.cast(low, x.dtype)), tf.cast(high, x.dtype))

    def keras_subtract(shapes, dtype):
        a, b = (keras.Input(shape=s[1:], batch_size=s[0], dtype=dtype, name=n) for s, n in zip(shapes, "ab"))
        return keras.Model([a, b], keras.layers.Subtract()([a, b]))

    def keras_lambda(shapes, dtype):
        a, b = (keras.Input(shape=s[1:], batch_size=s[0], dtype=dtype, name=n) for s, n in zip(shapes, "ab"))
        layer = keras.layers.Lambda(lambda t: tf.math.squared_difference(t[0], t[1]))
        return keras.Model([a, b], layer([a, b]))

    sqd, sub = tf.math.squared_difference, tf.subtract
    return {
        # recipe: (shapes of a and b, a function of (a, b), "constant" or ("keras", a builder of
        # the Keras model), the program as the docs show it)
        "squared_difference": (SAME, sqd, "tf.math.squared_difference(a, b)"),
        "subtract": (SAME, sub, "tf.subtract(a, b)"),
        "squared_difference_rank4": (([2, 1, 3, 4], [5, 1, 4]), sqd, "a [2,1,3,4], b [5,1,4]"),
        "subtract_rank4": (([2, 1, 3, 4], [5, 1, 4]), sub, "a [2,1,3,4], b [5,1,4]"),
        "squared_difference_rank5": (([2, 1, 3, 1, 4], [3, 1, 2, 1]), sqd, "a [2,1,3,1,4], b [3,1,2,1]"),
        "subtract_rank5": (([2, 1, 3, 1, 4], [3, 1, 2, 1]), sub, "a [2,1,3,1,4], b [3,1,2,1]"),
        "squared_difference_rank6": (([2, 1, 3, 1, 2, 1], [1, 2, 1, 3, 1, 2]), sqd,
                                     "a [2,1,3,1,2,1], b [1,2,1,3,1,2]"),
        "subtract_rank6": (([2, 1, 3, 1, 2, 1], [1, 2, 1, 3, 1, 2]), sub, "a [2,1,3,1,2,1], b [1,2,1,3,1,2]"),
        "subtract_constant": (([2, 3, 4], None), "constant", "a - c, c a constant [4] from the seed"),
        "subtract_relu": (SAME, lambda a, b: tf.nn.relu(sub(a, b)), "tf.nn.relu(a - b)"),
        "subtract_relu6": (SAME, lambda a, b: tf.nn.relu6(sub(a, b)), "tf.nn.relu6(a - b)"),
        "subtract_clip": (SAME, lambda a, b: clip(sub(a, b), -1, 1), "tf.clip_by_value(a - b, -1, 1)"),
        "subtract_min_max": (SAME, lambda a, b: minmax(sub(a, b), -0.5, 2.5),
                             "tf.minimum(tf.maximum(a - b, -0.5), 2.5) (int32: bounds 0 and 2)"),
        "squared_difference_clip": (SAME, lambda a, b: clip(sqd(a, b), 0, 6), "tf.clip_by_value((a - b)^2, 0, 6)"),
        "square_of_subtract": (SAME, lambda a, b: tf.square(sub(a, b)), "tf.square(a - b)"),
        "mean_loss": (SAME, lambda a, b: tf.reduce_mean(sqd(a, b)), "tf.reduce_mean(squared_difference(a, b))"),
        "mean_loss_last_axis": (SAME, lambda a, b: tf.reduce_mean(sqd(a, b), axis=-1),
                                "tf.reduce_mean(squared_difference(a, b), axis=-1)"),
        "keras_subtract": (SAME, ("keras", keras_subtract), "keras.layers.Subtract()([a, b])"),
        "keras_lambda_squared_difference": (SAME, ("keras", keras_lambda),
                                            "keras.layers.Lambda(tf.math.squared_difference)([a, b])"),
    }


# type: (input dtype of the program, quantization, inference I/O type), description
TYPES = {
    "float32": ("float32", None, None, "float32, no optimization"),
    "int32": ("int32", None, None, "int32 tensors"),
    "int8": ("float32", "int8", "int8", "full-integer int8, int8 I/O (TFLITE_BUILTINS_INT8)"),
    "int8_uint8_io": ("float32", "int8", "uint8", "full-integer int8, uint8 I/O (TFLITE_BUILTINS_INT8)"),
    "int8_float_io": ("float32", "int8", None, "int8 with float I/O: the default recipe "
                      "(Optimize.DEFAULT and a representative dataset)"),
    "int16x8": ("float32", "16x8", "int16", "16x8 (int16 activations, int8 weights), int16 I/O"),
    "int16x8_float_io": ("float32", "16x8", None, "16x8, float I/O"),
}


def model_names():
    """Every model of the corpus, in order: recipe x type (without TensorFlow)."""
    import types as _types
    stub = _types.SimpleNamespace(math=_types.SimpleNamespace(squared_difference=None), subtract=None)
    return [f"{graph}-{kind}" for graph in _graphs(stub, None) for kind in TYPES]


def model_seed(name):
    return (SEED + zlib.crc32(name.encode())) % 2**32


def _convert(tf, keras, np, graph, kind, name):
    graphs = _graphs(tf, keras)
    shapes, builder, _ = graphs[graph]
    program_dtype, quant, io_type, _ = TYPES[kind]
    dtype = getattr(tf, program_dtype)
    rng = np.random.default_rng([SEED, zlib.crc32(name.encode()), 1])
    if builder == "constant":
        low, high = INT32_RANGE if program_dtype == "int32" else FLOAT_RANGE
        values = (rng.integers(low, high + 1, shapes[0][-1:]) if program_dtype == "int32"
                  else rng.uniform(low, high, shapes[0][-1:]))
        constant = tf.constant(values.astype(program_dtype))
        specs = [tf.TensorSpec(shapes[0], dtype, name="a")]
        function = tf.function(lambda a: tf.subtract(a, constant), input_signature=specs)
    elif isinstance(builder, tuple):
        model = builder[1](shapes, program_dtype)
        specs = [tf.TensorSpec(s, dtype, name=n) for s, n in zip(shapes, "ab")]
        function = tf.function(lambda a, b: model([a, b]), input_signature=specs)
    else:
        specs = [tf.TensorSpec(s, dtype, name=n) for s, n in zip(shapes, "ab")]
        function = tf.function(builder, input_signature=specs)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function.get_concrete_function()], function)
    if quant:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]

        def representative():
            for _ in range(CALIBRATION_SAMPLES):
                yield [rng.uniform(*FLOAT_RANGE, spec.shape.as_list()).astype(np.float32) for spec in specs]

        converter.representative_dataset = representative
        if quant == "16x8":
            converter.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        elif io_type:  # integer I/O: integer operators only; float I/O is the default recipe
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if io_type:
            converter.inference_input_type = getattr(tf, io_type)
            converter.inference_output_type = getattr(tf, io_type)
    return converter.convert(), [spec.name for spec in specs]


def _write_part(out_dir, part, parts):
    """Converts every model whose index is part mod parts; returns their manifest entries."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf
    import keras
    entries = {}
    for index, name in enumerate(model_names()):
        if index % parts != part:
            continue
        graph, kind = name.split("-")
        program_dtype, _, io_type, _ = TYPES[kind]
        entry = {"recipe": graph, "type": kind, "seed": model_seed(name),
                 "program": _graphs(tf, keras)[graph][2], "type_description": TYPES[kind][3]}
        try:
            data, inputs = _convert(tf, keras, np, graph, kind, name)
        except Exception as error:  # noqa: BLE001 - the converter refuses the recipe: recorded
            entry["converter_error"] = _error_text(error)
            entries[name] = entry
            continue
        (out_dir / f"{name}.tflite").write_bytes(data)
        entry["file"] = f"{name}.tflite"
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["input_names"] = inputs
        # What corpus_peer.py draws for each input: integer inputs over their type's whole
        # range, except int32 (INT32_RANGE); float inputs uniform over FLOAT_RANGE.
        if program_dtype == "int32":
            entry["input_range"] = list(INT32_RANGE)
        elif io_type:
            entry["input_range"] = "the type's whole range"
        else:
            entry["input_range"] = list(FLOAT_RANGE)
        entries[name] = entry
    return entries


def _error_text(error):
    """The converter's message without what depends on the machine (the paths and lines of
    TensorFlow's Python files that MLIR's diagnostics name): its first "error: ..." when it has one."""
    text = str(error)
    match = re.search(r"error: ([^\n]*)", text)
    if match:
        text = f"{text.splitlines()[0].split('/')[0]} error: {match.group(1)}"
    return " ".join(f"{type(error).__name__}: {text}".split())[:300]


def versions():
    import importlib.metadata
    return {name: importlib.metadata.version(name) for name in ("tensorflow-cpu", "keras", "numpy")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--jobs", type=int, default=1, help="converter processes (each imports TensorFlow, about 3 s)")
    parser.add_argument("--part", help=argparse.SUPPRESS)  # "k/n": one child's share
    args = parser.parse_args()
    out_dir = pathlib.Path(args.out_dir)
    if args.part:
        part, parts = map(int, args.part.split("/"))
        print(json.dumps(_write_part(out_dir, part, parts)))
        return
    start = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in list(out_dir.glob("*.tflite")) + [out_dir / "manifest.json"]:
        old.unlink(missing_ok=True)
    children = []
    for part in range(args.jobs):
        log = open(out_dir / f"converter-{part}.log", "w")
        children.append((subprocess.Popen([sys.executable, __file__, str(out_dir), "--part", f"{part}/{args.jobs}"],
                                          stdout=subprocess.PIPE, stderr=log, text=True), log))
    entries = {}
    for part, (child, log) in enumerate(children):
        output, _ = child.communicate()
        log.close()
        if child.returncode != 0:
            sys.exit(f"converter_corpus: part {part} failed (exit {child.returncode}): see {log.name}")
        entries.update(json.loads(output.splitlines()[-1]))
    manifest = {"seed": SEED, "versions": versions(), "calibration_samples": CALIBRATION_SAMPLES,
                "types": [[kind, value[3]] for kind, value in TYPES.items()],
                "recipes": list(dict.fromkeys(name.split("-")[0] for name in model_names())),
                "models": {name: entries[name] for name in model_names()}}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    made = sum("file" in e for e in entries.values())
    print(f"converter_corpus: {made} models of {len(entries)} recipes x types in {out_dir} "
          f"({time.monotonic() - start:.1f} s, {args.jobs} processes)")


if __name__ == "__main__":
    main()
