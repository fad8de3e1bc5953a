"""Inputs that are not NumPy arrays but expose their memory: through DLPack
(__dlpack__ and __dlpack_device__, as PyTorch, JAX and CuPy tensors do) or
through __array_interface__. Both are read in place, without a copy; memory on
a device other than the CPU is refused, naming the device; out= stays a NumPy
array."""

import tracemalloc

import numpy as np
import pytest

import sqdiff


class DLPackOnly:
    """A producer that offers nothing but DLPack (no __array__, no buffer)."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, *args, **kwargs):
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class InterfaceOnly:
    """A producer that offers nothing but __array_interface__."""

    def __init__(self, array):
        self._array = array  # keeps the memory alive
        self.__array_interface__ = array.__array_interface__


class OnDevice:
    """A tensor on a GPU: its memory must not be touched, nor exported."""

    def __init__(self, device_type, device_id):
        self._device = (device_type, device_id)

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("__dlpack__ was called for memory on another device")

    def __dlpack_device__(self):
        return self._device


class BrokenExport(DLPackOnly):
    def __dlpack__(self, *args, **kwargs):
        raise BufferError("this tensor cannot be exported")


class NoDevice:
    """A producer that cannot say its device, as a PyTorch meta tensor (no data) cannot."""

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("__dlpack__ was called for an object with no device")

    def __dlpack_device__(self):
        raise ValueError("Unknown device type meta for Dlpack")


class NegativeView(DLPackOnly):
    """PyTorch's negative bit, as torch 1.13 exports it: DLPack gives the stored values, and
    the tensor's values are their negation (is_neg(), resolve_neg())."""

    def is_neg(self):
        return True

    def resolve_neg(self):
        return DLPackOnly(-self._array)


WRAPPERS = [DLPackOnly, InterfaceOnly]


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("op", ["subtract", "squared_difference"])
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint64", "float16"])
def test_results_equal_the_numpy_arrays(wrap, op, dtype):
    rng = np.random.default_rng(1414)
    a = rng.integers(0, 100, (4, 6)).astype(dtype)
    b = rng.integers(0, 100, (6,)).astype(dtype)
    expected = getattr(sqdiff, op)(a, b)
    for args in ((wrap(a), b), (a, wrap(b)), (wrap(a), wrap(b))):
        result = getattr(sqdiff, op)(*args)
        assert result.dtype == expected.dtype
        assert np.array_equal(result, expected)


@pytest.mark.parametrize("wrap", WRAPPERS)
def test_strided_producers_are_read_in_place(wrap):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    view = base[::-2, 1::3]
    assert np.array_equal(sqdiff.subtract(wrap(view), 1.5), view - 1.5)
    assert np.array_equal(sqdiff.sum_squared_difference(wrap(view), np.float64(0), axis=0),
                          (view * view).sum(axis=0))


@pytest.mark.parametrize("wrap", WRAPPERS)
def test_inputs_are_not_copied(wrap):
    a = np.ones(2**21, np.float32)  # 8 MiB
    out = np.empty_like(a)
    tracemalloc.start()
    try:
        sqdiff.squared_difference(wrap(a), wrap(a), out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < a.nbytes // 8, peak


@pytest.mark.parametrize("device_type, name", [(2, "CUDA"), (10, "ROCm"), (14, "oneAPI"), (99, "unknown")])
def test_memory_on_another_device_is_refused_by_name(device_type, name):
    a = np.zeros(3, np.float32)
    with pytest.raises(sqdiff.Error, match=rf"^subtract: b is on a {name} device \(DLPack device type "
                                           rf"{device_type}, id 1\); sqdiff reads only CPU memory"):
        sqdiff.subtract(a, OnDevice(device_type, 1))
    with pytest.raises(sqdiff.Error, match=r"^mean_squared_difference: a is on a CUDA device"):
        sqdiff.mean_squared_difference(OnDevice(2, 0), a)


def test_a_failed_export_is_an_error_naming_the_input():
    with pytest.raises(sqdiff.Error, match=r"^squared_difference: a \(a BrokenExport\) cannot be read through "
                                           r"DLPack: this tensor cannot be exported$"):
        sqdiff.squared_difference(BrokenExport(np.zeros(2)), np.zeros(2))


def test_a_producer_that_cannot_say_its_device_is_an_error():
    with pytest.raises(sqdiff.Error) as raised:
        sqdiff.sum_squared_difference(np.zeros(2), NoDevice())
    assert str(raised.value) == ("sum_squared_difference: b (a NoDevice) cannot say which device it is on: "
                                 "__dlpack_device__() raised ValueError: Unknown device type meta for Dlpack; "
                                 "sqdiff reads only CPU memory")


def test_a_negative_view_is_read_with_its_sign():
    stored = np.array([[1.5, -2.0, 0.0], [4.0, -0.25, 8.0]])
    values = -stored
    b = np.array([1.0, 2.0, -3.0])
    assert np.array_equal(sqdiff.subtract(NegativeView(stored), b), values - b)
    assert np.array_equal(sqdiff.squared_difference(b, NegativeView(stored)), (b - values) ** 2)
    assert np.array_equal(sqdiff.sum_squared_difference(NegativeView(stored), b, 1), ((values - b) ** 2).sum(1))
    grad_a, grad_b = sqdiff.squared_difference_backward(NegativeView(stored), b, np.ones((2, 3)))
    assert np.array_equal(grad_a, 2 * (values - b)) and np.array_equal(grad_b, -2 * (values - b).sum(0))
    assert np.array_equal(stored[0], [1.5, -2.0, 0.0])  # the producer's memory is not written


def test_nothing_is_written_when_an_input_is_refused():
    out = np.full(3, 5.0, np.float32)
    with pytest.raises(sqdiff.Error):
        sqdiff.subtract(np.zeros(3, np.float32), OnDevice(2, 0), out=out)
    assert out.tolist() == [5.0, 5.0, 5.0]


@pytest.mark.parametrize("wrap", WRAPPERS + [lambda array: OnDevice(1, 0)])
def test_out_must_be_a_numpy_array(wrap):
    a = np.zeros(3, np.float32)
    with pytest.raises(TypeError, match=r"^subtract: out must be a numpy\.ndarray, not "):
        sqdiff.subtract(a, a, out=wrap(np.zeros(3, np.float32)))
