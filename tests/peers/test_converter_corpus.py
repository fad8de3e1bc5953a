"""`sqdiff tflite` on the models TensorFlow's converter writes (issue 32, item 4).

The corpus is made by scripts/converter_corpus.sh (peers/converter_corpus.py, TensorFlow pinned in
requirements/converter.txt, in its own venv) into $SQDIFF_CORPUS_DIR; peers/corpus_peer.py runs
each model through LiteRT's reference kernels, its default resolver, TFLite-Micro and
`sqdiff tflite`. Here: every recipe x type was made (or the converter's refusal recorded), the
files are those the manifest names, sqdiff is the reference kernels bit for bit wherever both
run, and sqdiff refuses exactly the models that hold a kind of corpus_peer.KINDS_SQDIFF_LACKS,
naming those kinds. The figures of docs/COMPATIBILITY.md (and each file's sha256: the converter
writes the same bytes on every run) are checked by test_compatibility.py, from the same run.

Run by scripts/compatibility.sh --check, in the venv of requirements/peers.txt.
"""

import hashlib
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import converter_corpus  # noqa: E402
import corpus_peer  # noqa: E402


@pytest.fixture(scope="module")
def run():
    return corpus_peer.collect()


@pytest.fixture(scope="module")
def made(run):
    return {name: record for name, record in run["corpus"].items() if "converter" not in record}


def test_the_converter_is_the_pinned_one():
    pins = dict(line.split("==") for line in (ROOT / "requirements" / "converter.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    versions = corpus_peer.manifest()["versions"]
    for package in ("tensorflow-cpu", "keras", "numpy"):
        assert versions[package] == pins[package], package


def test_every_recipe_and_type_was_made_or_refused_by_the_converter(run, made):
    assert sorted(run["corpus"]) == sorted(converter_corpus.model_names())
    spec = corpus_peer.manifest()
    assert spec["seed"] == converter_corpus.SEED
    for name, record in made.items():
        # The file is the one the converter wrote: the manifest's hash.
        data = (corpus_peer.corpus_dir() / f"{name}.tflite").read_bytes()
        assert hashlib.sha256(data).hexdigest() == record["sha256"] == record["manifest_sha256"], name
    # Each recipe and each type has models; the converter refuses only a few (recorded).
    for recipe in spec["recipes"]:
        assert sum(r["recipe"] == recipe for r in made.values()) >= 5, recipe
    for kind, _ in spec["types"]:
        assert sum(r["type"] == kind for r in made.values()) >= 15, kind
    assert len(made) >= 0.9 * len(run["corpus"])


def test_sqdiff_never_crashes(made):
    for name, record in made.items():
        assert not record["sqdiff"].startswith("crashed"), (name, record["sqdiff"])


def test_every_model_both_run_is_identical(made):
    """(c): where LiteRT's reference kernels and sqdiff both run a model, 0 differing elements."""
    both = [name for name, record in made.items() if "sqdiff_differing" in record]
    assert len(both) >= 40
    for name in both:
        record = made[name]
        assert record["elements"] > 0, name
        assert record["sqdiff_differing"] == 0, (name, record["sqdiff_differing"], record["elements"])


def test_sqdiff_refuses_exactly_the_models_with_a_kind_it_lacks(made):
    """(b): refused when and only when the model holds a kind of KINDS_SQDIFF_LACKS, with the one
    line naming those kinds. When a kind lands, take it out of the list: its models must then run.
    A kind new to the corpus that sqdiff cannot run fails here too (the model is refused while the
    list says it should run): add it to the list, or teach sqdiff."""
    lacks = set(corpus_peer.KINDS_SQDIFF_LACKS)
    for name, record in made.items():
        missing = set(record["operators"]) & lacks
        if missing:
            assert record["sqdiff"].startswith("refused: sqdiff: error: "), (name, record["sqdiff"])
            assert re.search(r"cannot run \d+ operators? of \d+ kinds? \(", record["sqdiff"]), record["sqdiff"]
            assert set(record["sqdiff_missing_kinds"]) == missing, (name, record["sqdiff"])
        else:
            assert record["sqdiff"] == "ran", (name, record["sqdiff"])
    # Every kind of the list is still one that some corpus model holds.
    held = {kind for record in made.values() for kind in record["operators"]}
    assert lacks <= held, lacks - held


def test_sqdiff_runs_what_the_reference_kernels_refuse_only_as_tflite_micro_does(made):
    """int16 SQUARED_DIFFERENCE (the 16x8 recipes): LiteRT refuses it, sqdiff computes SPEC 9,
    and TFLite-Micro gives the same elements, but after a RELU6 whose output is quantized otherwise
    than its input, which TFLite-Micro does not rescale (the rule corpus_peer.explanations names)."""
    alone = [name for name, record in made.items() if record["sqdiff"] == "ran" and record["reference"] != "ran"]
    assert alone
    compared = 0
    for name in alone:
        record = made[name]
        assert "SquaredDifference only supports FLOAT32 and INT32 now, got 7" in record["reference"], name
        micro = record["tflite-micro"]
        assert micro["against"] == "sqdiff" and micro["elements"] > 0, (name, micro)
        if record.get("rescaling_relu6"):
            continue
        assert micro["differing"] == 0, (name, micro)
        compared += 1
    assert compared > 0


def test_the_notes_explain_every_difference_of_the_other_runtimes(made):
    """(d): the default resolver's differences are MEANs the XNNPACK delegate took, TFLite-Micro's
    RELU6s whose output is quantized otherwise than their input (corpus_peer.markdown's notes)."""
    for runtime, (explained, other) in corpus_peer.explanations(made).items():
        assert not other, (runtime, other)
    # The reference kernels' own runs: every model they run is compared by the other two.
    for name, record in made.items():
        if record["reference"] == "ran":
            assert isinstance(record["litert-default"], dict), (name, record["litert-default"])
