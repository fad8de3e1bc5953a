"""PyTorch tensors through DLPack, with a real producer: Debian's python3-torch
(scripts/install-deps.sh --tests) in the CMake stages. CPU tensors are read in place
and give the bits their NumPy arrays give; what DLPack or NumPy cannot take
is an sqdiff.Error naming the input. The venv stage has no PyTorch (its wheel
is large); test_array_protocols.py covers DLPack there with a producer of its
own."""

import math
import tracemalloc

import numpy as np
import pytest

import sqdiff
from optional_modules import require

torch = require("torch")

DTYPES = [torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("op", ["subtract", "squared_difference"])
def test_cpu_tensors_give_the_bits_of_their_numpy_arrays(op, dtype):
    generator = torch.Generator().manual_seed(14)
    a = torch.randint(0, 120, (3, 5), generator=generator).to(dtype)
    b = torch.randint(0, 120, (5,), generator=generator).to(dtype)
    expected = getattr(sqdiff, op)(a.numpy(), b.numpy())
    for args in ((a, b), (a, b.numpy()), (a.numpy(), b)):
        result = getattr(sqdiff, op)(*args)
        assert isinstance(result, np.ndarray) and result.dtype == expected.dtype
        assert np.array_equal(result.view(np.uint8), expected.view(np.uint8))


def test_strided_tensor_views_are_read_in_place():
    base = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    view = base[::2, 1::3].t()
    assert not view.is_contiguous()
    expected = sqdiff.squared_difference(view.numpy(), np.float32(2))
    assert np.array_equal(sqdiff.squared_difference(view, np.float32(2)), expected)
    assert np.array_equal(sqdiff.sum_squared_difference(view, np.float32(2), axis=1),
                          sqdiff.sum_squared_difference(view.numpy(), np.float32(2), axis=1))


def test_tensors_are_not_copied():
    a = torch.ones(2**21, dtype=torch.float32)  # 8 MiB
    out = np.empty(2**21, np.float32)
    tracemalloc.start()  # NumPy reports its allocations to tracemalloc: a copy would show
    try:
        sqdiff.subtract(a, a, out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < a.numel() * 4 // 8, peak
    assert not out.any()


def test_a_python_scalar_takes_the_tensors_dtype():
    result = sqdiff.squared_difference(torch.ones(2, dtype=torch.float32), 0.1)
    d = np.float32(1) - np.float32(0.1)
    assert result.dtype == np.float32 and result.tolist() == [d * d, d * d]


def test_what_dlpack_cannot_export_is_an_error_naming_the_input():
    with pytest.raises(sqdiff.Error, match=r"^subtract: b \(a Tensor\) cannot be read through DLPack: "):
        sqdiff.subtract(np.zeros(2, np.float32), torch.zeros(2, requires_grad=True))


def ml_dtypes_installed():
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(ml_dtypes_installed(), reason="ml_dtypes is installed: bfloat16 tensors are read "
                                                  "(test_torch_bfloat16.py)")
def test_a_bfloat16_tensor_without_ml_dtypes_says_what_to_do():
    out = np.full(2, 7, np.uint16)
    for function in (lambda t: sqdiff.squared_difference(t, t, out=out), lambda t: sqdiff.sum_squared_difference(t, t),
                     lambda t: sqdiff.squared_difference_backward(t, t, t)):
        with pytest.raises(sqdiff.Error) as raised:
            function(torch.ones(2, dtype=torch.bfloat16))
        message = str(raised.value)
        assert message.endswith(
            ": a (a Tensor) is a PyTorch bfloat16 tensor, which NumPy reads only with ml_dtypes' bfloat16 dtype: "
            "install ml_dtypes (pip install ml_dtypes, or pip install \"sqdiff[bf16]\") to pass it as it is, or pass "
            "its bits, a.view(torch.int16).numpy().view(numpy.uint16), with dtype=\"bfloat16\""), message
    assert out.tolist() == [7, 7]
    # The advice works: the bits, with dtype="bfloat16".
    t = torch.tensor([1.5, 3.0], dtype=torch.bfloat16)
    bits = t.view(torch.int16).numpy().view(np.uint16)
    d = sqdiff.squared_difference(bits, sqdiff.to_bfloat16_bits([1.0, 1.0]), dtype="bfloat16")
    assert sqdiff.from_bfloat16_bits(d).tolist() == [0.25, 4.0]


def test_out_must_be_a_numpy_array():
    a = torch.zeros(3)
    with pytest.raises(TypeError, match=r"^subtract: out must be a numpy\.ndarray, not Tensor"):
        sqdiff.subtract(a, a, out=torch.zeros(3))


# Tensors whose values are the negation of what they store (the negative bit), which DLPack
# cannot say: the values a, with the bit set.
def negative_views():
    stored = torch.tensor([[1.5, -2.0, 3.25], [0.0, 7.0, -0.5]], dtype=torch.float64)
    complex_values = torch.tensor([[1 + 2j, 3 - 1j, -0.5 + 4j], [2 + 0j, 1 - 8j, 5 + 0.25j]])
    return {
        "torch._neg_view(x)": torch._neg_view(stored),
        "c.conj().imag": complex_values.conj().imag,  # float32
    }


@pytest.mark.parametrize("name", list(negative_views()))
def test_negative_bit_tensors_are_read_with_their_sign(name):
    a = negative_views()[name]
    assert a.is_neg()
    values = a.resolve_neg().numpy()  # the tensor's values, with the sign applied
    assert not np.array_equal(values, np.from_dlpack(a))  # what DLPack exports: the stored values
    b = torch.tensor([0.5, -1.0, 2.0], dtype=a.dtype)
    b_values = b.numpy()
    for op in ("subtract", "squared_difference"):
        function = getattr(sqdiff, op)
        for args, expected in (((a, b), (values, b_values)), ((b, a), (b_values, values)),
                               ((a, a), (values, values)), ((a, 1.0), (values, 1.0))):
            result = function(*args)
            assert np.array_equal(result.view(np.uint8), function(*expected).view(np.uint8)), (op, args)
    assert sqdiff.subtract(a, 0.0).tolist() == values.tolist()
    for mean in (False, True):
        reduce = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
        for axis in (None, 0, 1):
            assert np.array_equal(reduce(a, b, axis), reduce(values, b_values, axis))
            assert np.array_equal(reduce(b, a, axis), reduce(b_values, values, axis))
    grad = torch._neg_view(torch.ones(2, 3, dtype=a.dtype) * 3)
    grad_values = grad.resolve_neg().numpy()
    for got, want in zip(sqdiff.squared_difference_backward(a, b, grad),
                         sqdiff.squared_difference_backward(values, b_values, grad_values)):
        assert np.array_equal(got, want)
    for got, want in zip(sqdiff.subtract_backward(grad, (2, 3), (3,)),
                         sqdiff.subtract_backward(grad_values, (2, 3), (3,))):
        assert np.array_equal(got, want)
    # The tensor itself is left as it was: still a negative view of the same storage.
    assert a.is_neg() and np.array_equal(a.resolve_neg().numpy(), values)


def test_a_negative_bit_tensor_as_out_is_refused_before_anything_is_written():
    """out= is a NumPy array (a tensor of any kind is a TypeError), so the stored values of a
    negative view are never written."""
    stored = torch.full((3,), 5.0)
    out = torch._neg_view(stored)
    a = np.ones(3, np.float32)
    for call in (lambda: sqdiff.subtract(a, a, out=out), lambda: sqdiff.squared_difference(a, a, out=out),
                 lambda: sqdiff.sum_squared_difference(a, a, 0, out=torch._neg_view(torch.full((), 5.0)))):
        with pytest.raises(TypeError, match=r"out must be a numpy\.ndarray, not Tensor"):
            call()
    assert stored.tolist() == [5.0, 5.0, 5.0]


def test_conjugate_bit_tensors_are_refused_in_every_function():
    c = torch.tensor([1 + 2j, 3 - 1j]).conj()
    assert c.is_conj()
    reason = r"cannot be read through DLPack: Can't export tensors with the conjugate bit set$"
    with pytest.raises(sqdiff.Error, match=rf"^subtract: b \(a Tensor\) {reason}"):
        sqdiff.subtract(np.zeros(2, np.float32), c)
    with pytest.raises(sqdiff.Error, match=rf"^sum_squared_difference: a \(a Tensor\) {reason}"):
        sqdiff.sum_squared_difference(c, c)
    with pytest.raises(sqdiff.Error, match=rf"^squared_difference_backward: a \(a Tensor\) {reason}"):
        sqdiff.squared_difference_backward(c, c, c)


def test_meta_tensors_are_an_error():
    meta = torch.empty(2, 3, device="meta")
    zeros = np.zeros((2, 3), np.float32)
    reason = "is a PyTorch meta tensor, which has a shape and a dtype but no data; sqdiff computes on data in CPU memory"
    calls = {
        "squared_difference": lambda: sqdiff.squared_difference(meta, zeros),
        "subtract": lambda: sqdiff.subtract(meta, 1.0),
        "sum_squared_difference": lambda: sqdiff.sum_squared_difference(zeros, meta),
        "mean_squared_difference": lambda: sqdiff.mean_squared_difference(meta, 0.0, axis=1),
        "squared_difference_backward": lambda: sqdiff.squared_difference_backward(meta, zeros, zeros),
        "subtract_backward": lambda: sqdiff.subtract_backward(meta, (2, 3), (3,)),
    }
    for op, call in calls.items():
        with pytest.raises(sqdiff.Error) as raised:
            call()
        name = "b" if op == "sum_squared_difference" else ("grad" if op == "subtract_backward" else "a")
        assert str(raised.value) == f"{op}: {name} {reason}"


def test_a_python_int_beyond_float64_beside_a_float64_tensor_rounds_to_inf():
    t = torch.tensor([1.0, -2.0], dtype=torch.float64)
    largest = float(np.finfo(np.float64).max)
    # 2**1024 - 2**970 is the largest double plus half an ulp: from there on, inf.
    for value, rounded in ((10 ** 400, math.inf), (-(2 ** 1024 - 2 ** 970), -math.inf),
                           (2 ** 1024 - 2 ** 970 - 1, largest)):
        assert sqdiff.subtract(t, value).tolist() == [-rounded, -rounded]
        assert sqdiff.squared_difference(value, t).tolist() == [math.inf, math.inf]
        assert sqdiff.sum_squared_difference(t, value).tolist() == math.inf
        grad_a, grad_b = sqdiff.squared_difference_backward(t, value, torch.ones(2, dtype=torch.float64))
        toward = -math.copysign(math.inf, rounded)  # 2 (a - b): beyond float64 even for the largest double
        assert grad_a.tolist() == [toward, toward] and grad_b.tolist() == -2 * toward
