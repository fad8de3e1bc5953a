"""PyTorch tensors through DLPack, with a real producer: Debian's python3-torch
(scripts/install-deps.sh) in the CMake stages. CPU tensors are read in place
and give the bits their NumPy arrays give; what DLPack or NumPy cannot take
is an sqdiff.Error naming the input. The venv stage has no PyTorch (its wheel
is large); test_array_protocols.py covers DLPack there with a producer of its
own."""

import tracemalloc

import numpy as np
import pytest

import sqdiff

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian's python3-torch: install-deps.sh)")

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
    with pytest.raises(sqdiff.Error, match=r"^squared_difference: a \(a Tensor\) cannot be read through DLPack: "):
        sqdiff.squared_difference(torch.zeros(2, dtype=torch.bfloat16), torch.zeros(2, dtype=torch.bfloat16))


def test_out_must_be_a_numpy_array():
    a = torch.zeros(3)
    with pytest.raises(TypeError, match=r"^subtract: out must be a numpy\.ndarray, not Tensor"):
        sqdiff.subtract(a, a, out=torch.zeros(3))
