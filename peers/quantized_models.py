"""The random single-op quantized models that LiteRT, TFLite-Micro and sqdiff run (issue 25),
from a fixed seed: each a configuration (op, type, shapes, scales, zero points, activation,
int16 path) and its inputs.

Scales are float32, log-uniform over 1e-4..10. An output scale is drawn the same way, or fitted
to the result's range times a random factor (so that most elements land inside the type rather
than on its bounds), or (one in ten) past the bound of SPEC 9's output stage, where LiteRT aborts
or sqdiff refuses. Zero points are the type's minimum or maximum a quarter of the time each.
Shapes broadcast NumPy's way (TFLite's only way), ranks 0 to 6, either input of lower rank.
"""

import dataclasses

import numpy as np

from quantized_tflite import NUMPY

SEED = 20261128
ACTIVATIONS = ("none", "relu", "relu6", "relu_n1_to_1")
MAX_ELEMENTS = 12000


@dataclasses.dataclass(frozen=True)
class Config:
    op: str  # "squared_difference" or "subtract"
    dtype: str  # "i8", "u8" or "i16"
    shape_a: tuple
    shape_b: tuple
    qa: tuple  # (float32 scale as a Python float, zero point)
    qb: tuple
    qout: tuple
    activation: str = "none"
    pot_scale_int16: bool = False

    def describe(self):
        text = (f"{self.op} {self.dtype} a{list(self.shape_a)} {_q(self.qa)} b{list(self.shape_b)} {_q(self.qb)} "
                f"out {_q(self.qout)}")
        if self.activation != "none":
            text += f" {self.activation}"
        if self.dtype == "i16" and self.op == "subtract":
            text += f" pot_scale_int16={str(self.pot_scale_int16).lower()}"
        return text


def _q(quant):
    return f"({quant[0]:.9g}, {quant[1]})"


def _f32(x):
    return float(np.float32(x))


def _log_uniform(rng, low=1e-4, high=10.0):
    return _f32(np.exp(rng.uniform(np.log(low), np.log(high))))


def _zero_point(rng, dtype):
    if dtype == "i16":
        return 0
    info = np.iinfo(NUMPY[dtype])
    pick = rng.random()
    if pick < 0.25:
        return int(info.min)
    if pick < 0.5:
        return int(info.max)
    return int(rng.integers(info.min, int(info.max) + 1))


def _shapes(rng):
    rank = int(rng.integers(0, 7))
    out = [int(rng.integers(1, 10)) for _ in range(rank)]
    while int(np.prod(out, dtype=np.int64)) > MAX_ELEMENTS:
        out[int(np.argmax(out))] -= 1
    a = [d if rng.random() < 0.7 else 1 for d in out]
    b = [d if rng.random() < 0.7 else 1 for d in out]
    if rank and rng.random() < 0.3:  # one input of lower rank
        if rng.random() < 0.5:
            a = a[int(rng.integers(1, rank + 1)):]
        else:
            b = b[int(rng.integers(1, rank + 1)):]
    return tuple(a), tuple(b)


def _fitted_out_scale(rng, op, dtype, qa, qb):
    """An output scale that spreads the result over the type, times 2^U(-3, 3)."""
    width = float(np.iinfo(NUMPY[dtype]).max) - float(np.iinfo(NUMPY[dtype]).min)
    spread = width * (qa[0] + qb[0]) / 2
    result = spread * spread / 4 if op == "squared_difference" else spread
    return _f32(result / width * 2.0 ** rng.uniform(-3, 3))


def _refused_out_scale(rng, op, dtype, qa, qb):
    """An output scale whose output multiplier is 1 or more (up to 4): where LiteRT aborts and
    sqdiff computes (squared difference) or refuses (subtract), SPEC 9."""
    twice = 2 * max(qa[0], qb[0])
    bound = twice * twice / 2**14 if op == "squared_difference" else twice / 2 ** (15 if dtype == "i16" else 20)
    return _f32(bound * 2.0 ** rng.uniform(-2, 0))


def _pot_scales(rng):
    """int16 subtract's power-of-two path: out = 2^k, one input 2^k and the other 2^(k - j); one
    in ten not of that form (LiteRT and sqdiff refuse it), one in five a hair (1e-5 relative)
    from a power of two, which TFLite's CheckedLog2 still takes for one."""
    k = int(rng.integers(-14, 4))
    low = k - int(rng.integers(0, 8))
    scales = [2.0 ** k, 2.0 ** low]
    if rng.random() < 0.5:
        scales.reverse()
    out = 2.0 ** k
    if rng.random() < 0.1:
        out = 2.0 ** (k - int(rng.integers(1, 4)))
    if rng.random() < 0.2:
        scales[int(rng.integers(0, 2))] *= 1 + 1e-5
    return (_f32(scales[0]), 0), (_f32(scales[1]), 0), (_f32(out), 0)


def configs(rng, op, dtype, count, pot_scale_int16=False, activations=ACTIVATIONS):
    out = []
    for _ in range(count):
        shape_a, shape_b = _shapes(rng)
        if pot_scale_int16:
            qa, qb, qout = _pot_scales(rng)
        else:
            qa = (_log_uniform(rng), _zero_point(rng, dtype))
            qb = (_log_uniform(rng), _zero_point(rng, dtype))
            pick = rng.random()
            if pick < 0.1:
                scale = _refused_out_scale(rng, op, dtype, qa, qb)
            elif pick < 0.35:
                scale = _log_uniform(rng)
            else:
                scale = _fitted_out_scale(rng, op, dtype, qa, qb)
            qout = (scale, _zero_point(rng, dtype))
        activation = "none" if op == "squared_difference" else str(rng.choice(activations))
        out.append(Config(op, dtype, shape_a, shape_b, qa, qb, qout, activation, pot_scale_int16))
    return out


def inputs(rng, config):
    """Stored integers over the whole type, its extremes included."""
    info = np.iinfo(NUMPY[config.dtype])
    draw = [np.asarray(rng.integers(info.min, int(info.max) + 1, size=shape), dtype=NUMPY[config.dtype])
            for shape in (config.shape_a, config.shape_b)]
    for array in draw:  # the extremes in every input of more than two elements
        if array.size > 2:
            array.flat[0], array.flat[-1] = info.min, info.max
    return draw
