"""Quantized SQUARED_DIFFERENCE and SUB: LiteRT (builtin reference kernels, and the default
resolver with its XNNPACK delegate) and TFLite-Micro run random single-op .tflite models
(quantized_models.py), sqdiff's quantized functions the same configurations; every element is
compared (issue 25, SPEC 9).

LiteRT aborts the process on some legal-looking parameters (SPEC 9), so the runtimes run in a
forked child; when it dies, the model it was on is recorded as an abort, with the last line the
runtime printed, and a new child goes on with the next model.
"""

import collections
import faulthandler
import functools
import importlib.metadata
import math
import multiprocessing
import os
import re
import tempfile

import numpy as np
import sqdiff
from ai_edge_litert import interpreter as litert
from tflite_micro.python.tflite_micro import runtime as tflm

import quantized_models
import quantized_tflite

# (op, type, pot_scale_int16, models) per runtime. LiteRT has no int16 SQUARED_DIFFERENCE, and
# TFLite-Micro neither uint8 SUB nor int16 SUB's power-of-two path (it ignores pot_scale_int16).
LITERT_SETS = [("squared_difference", "i8", False, 1000), ("subtract", "i8", False, 1000),
               ("subtract", "u8", False, 1000), ("subtract", "i16", False, 1000), ("subtract", "i16", True, 1000)]
TFLM_SETS = [("squared_difference", "i16", False, 1000), ("subtract", "i16", False, 1000),
             ("squared_difference", "i8", False, 600), ("subtract", "i8", False, 600)]
RUNTIMES = ("litert-reference", "litert-default", "tflite-micro")
TITLES = {"litert-reference": "LiteRT, builtin reference kernels (BUILTIN_REF)",
          "litert-default": "LiteRT, default resolver (XNNPACK delegate)",
          "tflite-micro": "TFLite-Micro"}
MARK = "@@sqdiff-model "
TFLM_ARENA = 1 << 22  # bytes: the largest model's three tensors with room to spare


def versions():
    return {"ai-edge-litert": importlib.metadata.version("ai-edge-litert"),
            "tflite-micro": importlib.metadata.version("tflite-micro"),
            "models": "written with ai_edge_litert.schema_py_generated (peers/quantized_tflite.py)"}


def set_name(op, dtype, pot):
    path = "" if dtype != "i16" or op != "subtract" else (" power-of-two" if pot else " general")
    return f"{op} {dtype}{path}"


def _litert(resolver):
    def run(model, a, b):
        runner = litert.Interpreter(model_content=model, num_threads=1, experimental_op_resolver_type=resolver)
        runner.allocate_tensors()
        details = runner.get_input_details()
        runner.set_tensor(details[0]["index"], a)
        runner.set_tensor(details[1]["index"], b)
        runner.invoke()
        delegated = any(op["op_name"] == "DELEGATE" for op in runner._get_ops_details())
        return np.array(runner.get_tensor(runner.get_output_details()[0]["index"]), copy=True), delegated
    return run


def _tflite_micro(model, a, b):
    runner = tflm.Interpreter.from_bytes(model, arena_size=TFLM_ARENA)
    runner.set_input(a, 0)
    runner.set_input(b, 1)
    runner.invoke()
    return np.array(runner.get_output(0), copy=True), False


RUNNERS = {"litert-reference": _litert(litert.OpResolverType.BUILTIN_REF),
           "litert-default": _litert(litert.OpResolverType.AUTO),
           "tflite-micro": _tflite_micro}


def _plain(text):
    """An error text without what changes from run to run (addresses, paths of temporary files)."""
    text = re.sub(r"0x[0-9a-f]+", "0x...", " ".join(text.split()))
    return text[:300]


def _child(runner, jobs, start, log, connection):
    faulthandler.disable()  # an abort is expected: no Python traceback
    os.dup2(log, 1)
    os.dup2(log, 2)
    for i in range(start, len(jobs)):
        os.write(2, f"\n{MARK}{i}\n".encode())
        try:
            output, delegated = runner(*jobs[i])
            connection.send(("ran", output, delegated))
        except Exception as error:  # noqa: BLE001 - the runtime refuses the model: recorded
            connection.send(("refused", _plain(f"{type(error).__name__}: {error}")))


def _abort_text(path, index):
    text = open(path, errors="replace").read()
    after = text.split(f"{MARK}{index}\n", 1)[-1]
    lines = [line for line in after.splitlines() if line.strip() and not line.startswith(("INFO:", "WARNING:"))]
    return _plain(lines[-1]) if lines else "nothing printed"


def run_isolated(runtime, jobs):
    """For each (model, a, b): ("ran", output, whether a delegate took the op), ("refused", error
    text) or ("aborted", the signal and the last line the runtime printed). runtime: a name of
    RUNNERS, or a function called with each job's items (corpus_peer.py's runners)."""
    context = multiprocessing.get_context("fork")
    results = []
    with tempfile.TemporaryDirectory() as work:
        log_path = os.path.join(work, "log")
        while len(results) < len(jobs):
            start = len(results)
            log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            receive, send = context.Pipe(duplex=False)
            runner = RUNNERS[runtime] if isinstance(runtime, str) else runtime
            process = context.Process(target=_child, args=(runner, jobs, start, log, send))
            process.start()
            send.close()
            os.close(log)
            while True:
                try:
                    results.append(receive.recv())
                except EOFError:
                    break
            process.join()
            if len(results) < len(jobs):
                text = _abort_text(log_path, len(results))
                status = process.exitcode
                signal = f"signal {-status}" if status is not None and status < 0 else f"exit status {status}"
                results.append(("aborted", f"{signal}, {text}"))
    return results


def _quantize_multiplier(real):
    """TFLite's QuantizeMultiplier: (q, e) = frexp(real), m = round_half_away(q * 2^31)."""
    q, e = math.frexp(real)
    m = math.floor(abs(q) * 2**31 + 0.5)
    if m == 2**31:
        m, e = 2**30, e + 1
    return m, e


def float32_multipliers_differ(config):
    """Whether TFLite-Micro's SUB multipliers differ from sqdiff's (SPEC 9). TFLite-Micro divides
    the float32 scales in float32 (sub_common.cc: twice_max_input_scale is a float, each quotient
    a float division cast to double); sqdiff, as LiteRT's Prepare, divides them in double.
    Its SQUARED_DIFFERENCE divides in double, as sqdiff does."""
    if config.op != "subtract":
        return False
    f32 = np.float32
    sa, sb, so = f32(config.qa[0]), f32(config.qb[0]), f32(config.qout[0])
    twice = f32(2) * max(sa, sb)  # exact
    scale = f32(2.0 ** (15 if config.dtype == "i16" else 20)) * so  # exact
    quotients = [(sa, twice), (sb, twice), (twice, scale)]
    return any(_quantize_multiplier(float(f32(x / y))) != _quantize_multiplier(float(x) / float(y))
               for x, y in quotients)


def output_multiplier_at_least_one(config):
    """SPEC 9's output stage: squared difference's s^2 / (2^14 s_out) (2^0 for int16), subtract's
    s / (2^20 s_out) (2^15 for int16), s = 2 max(s_a, s_b), in double as LiteRT's Prepare."""
    if config.op == "subtract" and config.dtype == "i16" and config.pot_scale_int16:
        return False  # the power-of-two path has no output multiplier
    twice = 2 * max(config.qa[0], config.qb[0])
    if config.op == "squared_difference":
        return twice * twice / (2.0 ** (14 if config.dtype != "i16" else 0) * config.qout[0]) >= 1
    return twice / (2.0 ** (15 if config.dtype == "i16" else 20) * config.qout[0]) >= 1


def _mbqm(x, m, e):
    """gemmlowp's MultiplyByQuantizedMultiplier in exact integers (x an int64 array)."""
    left, right = max(e, 0), max(-e, 0)
    product = x.astype(object) * (2 ** left) * m
    srdhm = (product + 2**30) // 2**31  # the products here are never negative but for the inputs'
    if right == 0:
        return srdhm
    magnitude = np.abs(srdhm)
    rounded = (magnitude + 2 ** (right - 1)) // 2**right
    return np.where(srdhm < 0, -rounded, rounded)


def int32_overflow(config, a, b):
    """The elements where TFLite-Micro's squared difference overflows int32: with an output
    multiplier of 2 or more it shifts d^2 left before its fixed-point multiply, and wraps where the
    product leaves int32 (undefined in C++); SPEC 9 takes it in 64 bits, so sqdiff saturates at the
    type's maximum there. False everywhere for SUB, whose multipliers are below 1."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    if config.op != "squared_difference":
        return np.zeros(shape, dtype=bool)
    left = 0 if config.dtype == "i16" else 7
    twice = 2.0 * max(float(np.float32(config.qa[0])), float(np.float32(config.qb[0])))
    scaled = []
    for x, (scale, zero_point) in ((a, config.qa), (b, config.qb)):
        m, e = _quantize_multiplier(float(np.float32(scale)) / twice)
        scaled.append(_mbqm((np.broadcast_to(x, shape).astype(np.int64) - zero_point) * 2**left, m, e))
    _, e_out = _quantize_multiplier(twice * twice / (2.0 ** (2 * left) * float(np.float32(config.qout[0]))))
    square = (scaled[0] - scaled[1]) ** 2
    return np.asarray(square * 2 ** max(e_out, 0) > 2**31 - 1, dtype=bool)


def sqdiff_run(config, a, b):
    """("ran", output) or ("refused", sqdiff's error)."""
    try:
        if config.op == "squared_difference":
            out = sqdiff.quantized_squared_difference(a, b, a_quant=config.qa, b_quant=config.qb,
                                                      out_quant=config.qout)
        else:
            out = sqdiff.quantized_subtract(a, b, a_quant=config.qa, b_quant=config.qb, out_quant=config.qout,
                                            activation=config.activation, pot_scale_int16=config.pot_scale_int16)
    except sqdiff.Error as error:
        return "refused", _plain(str(error))
    return "ran", out


def model_of(config):
    return quantized_tflite.single_op(config.op, config.dtype, config.shape_a, config.shape_b, config.qa, config.qb,
                                      config.qout, config.activation, config.pot_scale_int16)


def generate_models(sets):
    """[(set name, config, model, a, b)] from the fixed seed."""
    rng = np.random.default_rng(quantized_models.SEED)
    out = []
    for op, dtype, pot, count in sets:
        for config in quantized_models.configs(rng, op, dtype, count, pot_scale_int16=pot):
            a, b = quantized_models.inputs(rng, config)
            out.append((set_name(op, dtype, pot), config, model_of(config), a, b))
    return out


def _outcome_of(theirs, ours):
    their_word = {"ran": "runs", "refused": "refuses", "aborted": "aborts"}[theirs[0]]
    return f"runtime {their_word}, sqdiff {'computes' if ours[0] == 'ran' else 'refuses'}"


class Tally:
    """One runtime on one set of models: models, elements, identical, differing (max step), and
    the models either side refused or the runtime aborted on."""

    def __init__(self):
        self.models = 0
        self.elements = self.identical = self.differing = self.max_step = self.differing_models = 0
        self.outcomes = collections.Counter()  # "runtime aborts, sqdiff computes" etc.
        self.reasons = {}  # outcome: {text: count}
        self.examples = []  # up to three differing models: (config, elements, max step)
        self.delegated = 0  # models the default resolver's delegate (XNNPACK) took
        self.delegated_differing = 0  # differing elements in those models
        self.float32_models = self.float32_elements = 0  # TFLite-Micro SUB: models whose multipliers differ
        # Elements where the runtime's int32 product overflows and it wraps, where SPEC 9 saturates
        # (int32_overflow): counted apart from `differing`, and sqdiff's value there is the maximum.
        self.int32_wrapped = self.int32_wrapped_models = 0
        self.multiplier_one = collections.Counter()  # models with an output multiplier >= 1, by outcome

    def add(self, config, theirs, ours, a=None, b=None):
        self.models += 1
        if output_multiplier_at_least_one(config):
            both = theirs[0] == "ran" and ours[0] == "ran"
            self.multiplier_one[_outcome_of(theirs, ours) if not both else "both compute"] += 1
        if theirs[0] == "ran" and theirs[2]:
            self.delegated += 1
        if theirs[0] == "ran" and ours[0] == "ran":
            x, y = np.asarray(ours[1]).astype(np.int64), np.asarray(theirs[1]).astype(np.int64)
            if x.shape != y.shape:
                self._outcome("output shapes differ", f"{y.shape} from the runtime, {x.shape} from sqdiff")
                return
            if float32_multipliers_differ(config):
                self.float32_models += 1
                self.float32_elements += x.size
            steps = np.abs(x - y)
            wrapped = 0
            if a is not None and config.op == "squared_difference" and steps.any():
                mask = int32_overflow(config, a, b) & (steps != 0)
                wrapped = int(np.count_nonzero(mask))
                if wrapped:
                    top = np.iinfo(np.asarray(ours[1]).dtype).max
                    assert (x[mask] == top).all(), f"{config.describe()}: sqdiff must saturate where int32 overflows"
                    self.int32_wrapped += wrapped
                    self.int32_wrapped_models += 1
                    steps = np.where(mask, 0, steps)
            differing = int(np.count_nonzero(steps))
            self.elements += x.size
            self.identical += x.size - differing - wrapped
            self.differing += differing
            if differing:
                self.differing_models += 1
                self.max_step = max(self.max_step, int(steps.max()))
                if theirs[2]:
                    self.delegated_differing += differing
                if len(self.examples) < 3:
                    self.examples.append(f"{config.describe()}: {differing} of {x.size} elements, "
                                         f"max {int(steps.max())} step(s)")
            return
        outcome = _outcome_of(theirs, ours)
        text = theirs[1] if theirs[0] != "ran" else ours[1]
        if theirs[0] != "ran" and ours[0] != "ran":
            text = f"{theirs[1]} | sqdiff: {ours[1]}"
        self._outcome(outcome, text)

    def _outcome(self, outcome, text):
        self.outcomes[outcome] += 1
        text = re.sub(r"\((scales a|a 2\^)[^)]*\)", "(...)", text)  # one reason, whatever the scales
        reasons = self.reasons.setdefault(outcome, {})
        reasons[text] = reasons.get(text, 0) + 1

    def record(self):
        return {"models": self.models, "elements": self.elements, "identical": self.identical,
                "differing": self.differing, "differing_models": self.differing_models, "max_step": self.max_step,
                "delegated": self.delegated, "delegated_differing": self.delegated_differing,
                "float32_multiplier_models": self.float32_models, "float32_multiplier_elements": self.float32_elements,
                "int32_wrapped": self.int32_wrapped, "int32_wrapped_models": self.int32_wrapped_models,
                "output_multiplier_at_least_one": dict(sorted(self.multiplier_one.items())),
                "outcomes": dict(sorted(self.outcomes.items())), "reasons": self.reasons,
                "examples": self.examples}


def compare_runtime(runtime, models):
    theirs = run_isolated(runtime, [(model, a, b) for _, _, model, a, b in models])
    tallies = {}
    for (name, config, _, a, b), result in zip(models, theirs):
        tallies.setdefault(name, Tally()).add(config, result, sqdiff_run(config, a, b), a, b)
    return {name: tally.record() for name, tally in tallies.items()}


RANKS = range(4, 9)


def rank_models(sets):
    """One model per set and rank of 4 to 8 whose broadcast no runtime can fold into fewer
    dimensions: a of shape [2, 1, 2, 1, ...], b of [1, 3, 1, 3, ...], moderate scales."""
    rng = np.random.default_rng(quantized_models.SEED + 2)
    out = []
    for op, dtype, pot, _ in sets:
        for rank in RANKS:
            shape_a = tuple(2 if i % 2 == 0 else 1 for i in range(rank))
            shape_b = tuple(1 if i % 2 == 0 else 3 for i in range(rank))
            if pot:
                qa, qb, qout = (0.5, 0), (0.25, 0), (0.5, 0)
            else:
                zero = 0 if dtype == "i16" else 3
                qa, qb = (0.5, zero), (0.25, zero)
                qout = (1.5 if op == "squared_difference" else 0.7, zero)
            config = quantized_models.Config(op, dtype, shape_a, shape_b, qa, qb, qout, "none", pot)
            a, b = quantized_models.inputs(rng, config)
            out.append((set_name(op, dtype, pot), rank, config, a, b))
    return out


def compare_ranks(runtime, models):
    """{set name: {rank: "identical" | "differs" | what the runtime or sqdiff said}}."""
    theirs = run_isolated(runtime, [(model_of(config), a, b) for _, _, config, a, b in models])
    out = {}
    for (name, rank, config, a, b), result in zip(models, theirs):
        ours = sqdiff_run(config, a, b)
        if result[0] != "ran" or ours[0] != "ran":
            verdict = f"runtime {result[0]}, sqdiff {ours[0]}"
        else:
            # No count: past the ranks it handles, TFLite-Micro's values (and so how many differ)
            # change from run to run.
            verdict = "identical" if np.array_equal(np.asarray(result[1]), ours[1]) else "differs"
        out.setdefault(name, {})[str(rank)] = verdict
    return out


@functools.lru_cache(maxsize=None)
def collect_ranks():
    litert_models, tflm_models = rank_models(LITERT_SETS), rank_models(TFLM_SETS)
    return {"litert-reference": compare_ranks("litert-reference", litert_models),
            "litert-default": compare_ranks("litert-default", litert_models),
            "tflite-micro": compare_ranks("tflite-micro", tflm_models)}


@functools.lru_cache(maxsize=None)
def collect():
    """{runtime: {set name: record}}; one run per process (generate.py and the tests share it)."""
    litert_models = generate_models(LITERT_SETS)
    tflm_models = generate_models(TFLM_SETS)
    return {"litert-reference": compare_runtime("litert-reference", litert_models),
            "litert-default": compare_runtime("litert-default", litert_models),
            "tflite-micro": compare_runtime("tflite-micro", tflm_models)}



SECTION = "Quantized ops: LiteRT and TFLite-Micro"
SIGNATURE_KEYS = ("models", "elements", "identical", "differing", "differing_models", "max_step", "delegated",
                  "delegated_differing", "float32_multiplier_models", "int32_wrapped", "outcomes", "reasons",
                  "output_multiplier_at_least_one")


def _sum(groups, key):
    return sum(record[key] for record in groups.values())


def _row(runtime, name, record):
    outcomes = record["outcomes"]
    differing = (f"{record['differing']} in {record['differing_models']} models (max {record['max_step']} step)"
                 if record["differing"] else "0")
    if record["int32_wrapped"]:
        differing += (f"; {record['int32_wrapped']} in {record['int32_wrapped_models']} models where the runtime's "
                      "int32 product overflows and wraps (SPEC 9 saturates)")
    aborts = sum(n for o, n in outcomes.items() if o.startswith("runtime aborts"))
    refused = sum(n for o, n in outcomes.items() if o.startswith("runtime refuses"))
    return (f"| {TITLES[runtime]} | {name} | {record['models']} | {record['elements']} | {record['identical']} | "
            f"{differing} | {aborts} | {refused} | {outcomes.get('runtime runs, sqdiff refuses', 0)} |")


def _rank_table(ranks):
    lines = ["| runtime | op, type | " + " | ".join(f"rank {r}" for r in RANKS) + " |",
             "|---|---|" + "---|" * len(RANKS)]
    for runtime in RUNTIMES:
        for name, verdicts in ranks[runtime].items():
            lines.append(f"| {TITLES[runtime]} | {name} | " + " | ".join(verdicts[str(r)] for r in RANKS) + " |")
    return lines


def _rank_note(ranks):
    """What the rank table shows, per runtime: the ranks where every set is identical, and the others."""
    parts = []
    for runtime in RUNTIMES:
        good = [r for r in RANKS if all(v[str(r)] == "identical" for v in ranks[runtime].values())]
        bad = [r for r in RANKS if r not in good]
        text = f"{TITLES[runtime]} is identical to sqdiff at ranks {', '.join(map(str, good))}"
        if bad:
            text += (f", and at rank {', '.join(map(str, bad))} gives other values in every set without an error, "
                     "and not the same ones from run to run (past the ranks its broadcasting handles)")
        parts.append(text)
    return "; ".join(parts) + ". sqdiff broadcasts any rank (SPEC 3)."


def markdown(results, version, ranks):
    reference, default, micro = (results[r] for r in RUNTIMES)
    lines = [f"## {SECTION}", "",
             "Versions: " + "; ".join(f"{k} {v}" for k, v in version.items()) + ".", "",
             "Random single-op quantized models (peers/quantized_models.py, seed "
             f"{quantized_models.SEED}): scales log-uniform over 1e-4..10 (float32), the output scale "
             "either drawn so or fitted to the result's range, one in ten past SPEC 9's output-stage "
             "bound; zero points the type's minimum or maximum half of the time; SUB's four fused "
             "activations; ranks 0 to 6 with NumPy broadcasting, either input of lower rank; inputs over "
             "the whole type. Each .tflite file is run by LiteRT with the builtin reference kernels "
             "(`OpResolverType.BUILTIN_REF`) and with the default resolver (`AUTO`: the XNNPACK delegate "
             "takes SUB on int8/uint8 when it can), and the int16 and int8 ones by TFLite-Micro's Python "
             "interpreter; sqdiff's `quantized_squared_difference` / `quantized_subtract` run the same "
             "configurations. Every element is compared; the runtimes run in a forked child, so an abort "
             "is recorded, not fatal. Columns: models; elements both computed; identical elements; "
             "differing elements (max difference in steps of the output); models the runtime aborted on "
             "(the process ended); models it refused with an error; models sqdiff refused where the "
             "runtime ran.", "",
             "| runtime | op, type | models | elements | identical | differing | runtime aborts | "
             "runtime refuses | sqdiff refuses, runtime runs |", "|---|---|---|---|---|---|---|---|---|"]
    for runtime in RUNTIMES:
        for name, record in results[runtime].items():
            lines.append(_row(runtime, name, record))
    lines += ["", "Ranks: the random models have ranks 0 to 6. Beyond them, one model per rank whose "
              "broadcast cannot be folded into fewer dimensions (a of shape [2, 1, 2, 1, ...], b of "
              "[1, 3, 1, 3, ...]) shows how far each runtime's broadcasting goes:", ""]
    lines += _rank_table(ranks)
    lines += ["", "<details><summary>Every abort and refusal, with the message</summary>", ""]
    for runtime in RUNTIMES:
        for name, record in results[runtime].items():
            for outcome, reasons in record["reasons"].items():
                for text, count in reasons.items():
                    lines.append(f"- {TITLES[runtime]}, {name}: {outcome} ({count} models): `{text}`")
    lines += ["", "</details>", ""]
    examples = [(runtime, e) for runtime in RUNTIMES for r in results[runtime].values() for e in r["examples"]]
    if examples:
        lines += ["Models with differing elements (up to three of each group):", ""]
        lines += [f"- {TITLES[runtime]}: {e}" for runtime, e in examples]
        lines.append("")
    aborts = {n: r["outcomes"].get("runtime aborts, sqdiff computes", 0) for n, r in reference.items()}
    sqd = reference["squared_difference i8"]
    beyond_sub = {n: r["output_multiplier_at_least_one"] for n, r in reference.items() if n.startswith("subtract")}
    micro_sqd = {n: r["output_multiplier_at_least_one"].get("both compute", 0) for n, r in micro.items()
                 if n.startswith("squared_difference")}
    float32_models = {n: (r["float32_multiplier_models"], r["models"] - sum(r["outcomes"].values()))
                      for n, r in micro.items() if n.startswith("subtract")}
    delegated = {n: r["delegated"] for n, r in default.items() if r["delegated"]}
    lines += [
        "Why:", "",
        f"- **Reference kernels**: {_sum(reference, 'differing')} of {_sum(reference, 'elements')} elements "
        "differ: wherever both compute, sqdiff is LiteRT's reference kernel bit for bit "
        "(`tests/peers/test_litert_quantized.py` fails on a single differing bit).",
        f"- **LiteRT aborts** (SIGABRT, no message) on {sum(aborts.values())} int8 SQUARED_DIFFERENCE models: "
        f"all {sqd['output_multiplier_at_least_one'].get('runtime aborts, sqdiff computes', 0)} whose output "
        "multiplier s^2 / (2^14 s_out) is 1 or more, and no other (the abort SPEC 9 lists). sqdiff computes "
        "them as TFLite-Micro does (a left shift before the fixed-point multiply, SPEC 9), "
        f"and TFLite-Micro agrees: it ran {micro_sqd.get('squared_difference i8', 0)} int8 and "
        f"{micro_sqd.get('squared_difference i16', 0)} int16 such models, every element identical but "
        f"{_sum(micro, 'int32_wrapped')} (in {_sum(micro, 'int32_wrapped_models')} models) where its int32 "
        "product of the left-shifted square overflows: TFLite-Micro wraps there (undefined behaviour in C++, "
        "two's complement in practice), giving values far below the real one, where SPEC 9 takes the product "
        "in 64 bits and sqdiff gives the type's maximum, as the real arithmetic says. Those elements are "
        "counted apart, not in the differing column.",
        "- **SUB with an output multiplier of 1 or more** (an output scale at or below 2 max(s_a, s_b) / 2^20, "
        "2^15 for int16): LiteRT's reference kernel runs it on "
        + ", ".join(f"{v.get('runtime runs, sqdiff refuses', 0)} {n[len('subtract '):]}" for n, v in beyond_sub.items()
                    if v) +
        " models without complaint, giving values SPEC 9 counts as undefined (the multiplier is outside the "
        "range the kernel's fixed-point arithmetic is written for); it refuses the few whose activation "
        "bounds overflow int32 (`no_integer_overflow_from_quantization`). TFLite-Micro aborts on every one. "
        "sqdiff refuses them all with an `sqdiff::Error` naming the bound (SPEC 9), so these are the only models "
        "where sqdiff refuses what LiteRT runs.",
        "- **int16 SUB, power-of-two path**: scales that are powers of two but not of the form the path "
        "needs (one input's scale equal to the output's, the other's at most that) are refused by LiteRT's "
        "Prepare (`input1_shift == 0 || input2_shift == 0`, `input1_shift <= 0`, `input2_shift <= 0`) and "
        "by sqdiff alike. One in five of the power-of-two models has a scale a hair (1e-5 relative) from a "
        "power of two, which TFLite's `CheckedLog2` tolerance still counts as one; they are identical too.",
        "- **Default resolver**: the XNNPACK delegate took "
        + ", ".join(f"{v} {n}" for n, v in delegated.items()) +
        " models (it declines the others, which run LiteRT's builtin optimized kernels). "
        f"{_sum(default, 'differing')} of {_sum(default, 'elements')} elements differ, by at most "
        f"{max(r['max_step'] for r in default.values())} step, "
        f"{_sum(default, 'delegated_differing')} of them in models the delegate took: XNNPACK's qs8/qu8 "
        "subtract has a fixed-point algorithm of its own (its own multipliers and rounding), not LiteRT's "
        "reference one, and the two part by a step on rare elements. SQUARED_DIFFERENCE and int16 SUB are "
        "not delegated, and are identical.",
        "- **TFLite-Micro** computes SUB's multipliers from float32 quotients of the scales "
        "(`sub_common.cc`), where LiteRT's Prepare and sqdiff divide in double (SPEC 9): the multiplier "
        "differs in "
        + ", ".join(f"{m} of the {ran} {n} models it ran" for n, (m, ran) in float32_models.items()) +
        " (a float32 quotient has 24 significant bits, the multiplier 31), and yet "
        f"{sum(r['differing'] for n, r in micro.items() if n.startswith('subtract'))} elements of their "
        f"{sum(r['elements'] for n, r in micro.items() if n.startswith('subtract'))} differ: the later "
        "rounding steps absorb so small a change on these models. Its SQUARED_DIFFERENCE divides in double, "
        "as sqdiff does; int16 SQUARED_DIFFERENCE, which LiteRT lacks (`SquaredDifference only supports "
        "FLOAT32 and INT32 now, got 7`), is identical throughout. TFLite-Micro has no uint8 SUB and ignores "
        "`pot_scale_int16` (its int16 SUB is always the general path), so those are not run there.",
        "- **Ranks**: " + _rank_note(ranks),
    ]
    return "\n".join(lines)


def signature(results):
    return {f"{runtime}: {name}": {k: record[k] for k in SIGNATURE_KEYS}
            for runtime, groups in results.items() for name, record in groups.items()}


def run():
    results, ranks = collect(), collect_ranks()
    sig = signature(results)
    sig.update({f"{runtime}: {name}: ranks": verdicts for runtime, groups in ranks.items()
                for name, verdicts in groups.items()})
    return {"extra": {"signature": sig, "markdown": markdown(results, versions(), ranks),
                      "results": results, "ranks": ranks}}
