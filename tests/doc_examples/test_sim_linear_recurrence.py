# SPDX-License-Identifier: Apache-2.0
"""docs/linear-recurrence.md's forward and backward passes, in the simulator (on CPU tensors)
and on a GPU (``SCAN_TESTS_BACKEND=gpu``, CUDA tensors), against a float64 loop and
``torch.autograd.gradcheck``."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.sim

from conftest import GPU_BACKEND  # noqa: E402

DEVICE = "cuda" if GPU_BACKEND else "cpu"
#: tiles of 64 items (32 threads x 2): rows of several tiles stay quick in the simulator
SMALL = {"threads": 32, "items": 2}


def _example():
    from doc_examples.examples import linear_recurrence

    return linear_recurrence


def reference(a, x, h0, dy, dh_last):
    """(h, h_last, da, dx, dh0) in float64: the recurrence and its adjoint, step by step."""
    a, x, h0, dy, dh_last = (t.detach().double().cpu().numpy() for t in (a, x, h0, dy, dh_last))
    h = np.zeros_like(a)
    state = h0.copy()
    for t in range(a.shape[-1]):
        state = a[..., t] * state + x[..., t]
        h[..., t] = state
    da, dx = np.zeros_like(a), np.zeros_like(a)
    dh = dh_last.copy()
    for t in range(a.shape[-1] - 1, -1, -1):
        dh = dy[..., t] + (a[..., t + 1] * dh if t + 1 < a.shape[-1] else dh)
        dx[..., t] = dh
        da[..., t] = dh * (h[..., t - 1] if t > 0 else h0)
    return h, h[..., -1], da, dx, a[..., 0] * dx[..., 0]


def _inputs(shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(shape, generator=g) * 0.5 + 0.5
    x, dy = torch.randn(shape, generator=g), torch.randn(shape, generator=g)
    h0, dh_last = torch.randn(shape[:-1], generator=g), torch.randn(shape[:-1], generator=g)
    return [t.to(dtype).to(DEVICE) for t in (a, x, h0, dy, dh_last)]


@pytest.mark.parametrize("lookback", [False, True])
@pytest.mark.parametrize("T", [1, 64, 65, 300])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_forward_and_backward_equal_a_float64_loop(lookback, T, dtype):
    lr = _example()
    a, x, h0, dy, dh_last = _inputs((2, 3, T), dtype)
    leaves = [t.clone().requires_grad_() for t in (a, x, h0)]
    h, h_last = lr.linear_recurrence(*leaves, lookback=lookback, **SMALL)
    torch.autograd.backward([h, h_last], [dy, dh_last.to(h_last.dtype)])
    want = reference(a, x, h0, dy, dh_last)
    got = [h, h_last, *(t.grad for t in leaves)]
    tol = 1e-12 if dtype == torch.float64 else 2e-5
    for name, g, w in zip(("h", "h_last", "da", "dx", "dh0"), got, want, strict=True):
        np.testing.assert_allclose(
            g.detach().double().cpu().numpy(), w, rtol=tol, atol=tol, err_msg=name
        )


@pytest.mark.sanitize  # the example's kernels under compute-sanitizer too
@pytest.mark.parametrize("lookback", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_storage_with_a_float32_state(lookback, dtype):
    if dtype == torch.bfloat16:
        pytest.importorskip("ml_dtypes")
    lr = _example()
    a, x, h0, dy, dh_last = _inputs((2, 2, 150), dtype, seed=5)
    leaves = [t.clone().requires_grad_() for t in (a, x, h0)]
    h, h_last = lr.linear_recurrence(*leaves, lookback=lookback, **SMALL)
    assert h.dtype == dtype
    assert h_last.dtype == torch.float32
    torch.autograd.backward([h, h_last], [dy, dh_last.float()])
    # the reference runs on the same (rounded) inputs in float64; outputs round once
    want = reference(a, x, h0, dy, dh_last)
    got = [h, h_last, *(t.grad for t in leaves)]
    for name, g, w in zip(("h", "h_last", "da", "dx", "dh0"), got, want, strict=True):
        scale = np.abs(w).max()
        err = np.abs(g.detach().double().cpu().numpy() - w).max() / scale
        assert err < 1e-2, (name, err)
    assert leaves[0].grad.dtype == dtype


def test_without_h0_the_state_starts_at_zero_and_h0_gets_no_gradient():
    lr = _example()
    a, x, _, dy, _ = _inputs((1, 2, 100))
    leaves = [t.clone().requires_grad_() for t in (a, x)]
    h, h_last = lr.linear_recurrence(*leaves, **SMALL)
    h.backward(dy)
    zeros = torch.zeros(1, 2, dtype=a.dtype, device=a.device)
    want = reference(a, x, zeros, dy, zeros)
    np.testing.assert_allclose(h.detach().cpu().numpy(), want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_last.detach().cpu().numpy(), want[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(leaves[0].grad.cpu().numpy(), want[2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(leaves[1].grad.cpu().numpy(), want[3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lookback", [False, True])
def test_a_loss_of_one_output_alone(lookback):
    # the other output's gradient reaches backward as None (no tensor of zeros), twice in a row
    lr = _example()
    a, x, h0, dy, dh_last = _inputs((2, 1, 130), seed=11)
    zeros = torch.zeros_like(dh_last)
    for uses_h in (True, False, True):
        leaves = [t.clone().requires_grad_() for t in (a, x, h0)]
        h, h_last = lr.linear_recurrence(*leaves, lookback=lookback, **SMALL)
        if uses_h:
            h.backward(dy)
            want = reference(a, x, h0, dy, zeros)
        else:
            h_last.backward(dh_last)
            want = reference(a, x, h0, torch.zeros_like(dy), dh_last)
        for name, g, w in zip(("da", "dx", "dh0"), leaves, want[2:], strict=True):
            np.testing.assert_allclose(
                g.grad.cpu().numpy(), w, rtol=1e-12, atol=1e-12, err_msg=name
            )


@pytest.mark.parametrize("lookback", [False, True])
def test_gradcheck(lookback):
    lr = _example()
    a, x, h0, _, _ = _inputs((1, 2, 70))
    leaves = tuple(t.clone().requires_grad_() for t in (a, x, h0))
    # fast mode: the Jacobians projected on random vectors (a few launches, not one per input)
    assert torch.autograd.gradcheck(
        lambda a, x, h0: lr.linear_recurrence(a, x, h0, lookback=lookback, threads=32, items=1),
        leaves,
        eps=1e-6,
        atol=1e-8,
        fast_mode=True,
    )


@pytest.mark.parametrize(
    ("dtype", "T", "shape"),
    [
        (torch.bfloat16, 5000, (128, 16)),
        (torch.float16, 100, (128, 16)),
        (torch.float32, 2048, (128, 16)),
        (torch.float32, 2049, (256, 8)),
        (torch.float64, 2048, (256, 8)),
    ],
)
def test_the_default_block_shape_of_a_row(dtype, T, shape):
    lr = _example()
    acc = torch.float64 if dtype == torch.float64 else torch.float32
    assert lr._shape(dtype, acc, T, False, None, None) == shape
    assert lr._shape(dtype, acc, T, False, 64, None) == (64, shape[1])
    assert lr._shape(dtype, acc, T, False, None, 4) == (shape[0], 4)


@pytest.mark.sanitize  # the example's kernels under compute-sanitizer too
@pytest.mark.skipif(not GPU_BACKEND, reason="tiles of 2048 items: slow in the simulator")
@pytest.mark.parametrize(
    ("dtype", "T"), [(torch.bfloat16, 5000), (torch.float32, 2048), (torch.float32, 3001)]
)
def test_the_default_block_shapes_on_rows_of_several_tiles(dtype, T):
    lr = _example()
    a, x, h0, dy, dh_last = _inputs((2, 3, T), dtype, seed=7)
    leaves = [t.clone().requires_grad_() for t in (a, x, h0)]
    h, h_last = lr.linear_recurrence(*leaves, lookback=False)
    torch.autograd.backward([h, h_last], [dy, dh_last.to(h_last.dtype)])
    want = reference(a, x, h0, dy, dh_last)
    got = [h, h_last, *(t.grad for t in leaves)]
    for name, g, w in zip(("h", "h_last", "da", "dx", "dh0"), got, want, strict=True):
        err = np.abs(g.detach().double().cpu().numpy() - w).max() / np.abs(w).max()
        assert err < (1e-2 if dtype == torch.bfloat16 else 1e-5), (name, err)


def test_rows_and_lookback_agree_on_many_tiles():
    lr = _example()
    a, x, h0, _, _ = _inputs((1, 1, 1000), torch.float32, seed=3)
    rows = lr.linear_recurrence(a, x, h0, lookback=False, **SMALL)
    across = lr.linear_recurrence(a, x, h0, lookback=True, **SMALL)
    for r, c in zip(rows, across, strict=True):
        np.testing.assert_allclose(r.cpu().numpy(), c.cpu().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (lambda a, x, h0: (a, x[..., :-1], h0), ValueError, "one shape and dtype"),
        (lambda a, x, h0: (a, x.float(), h0), ValueError, "one shape and dtype"),
        (lambda a, x, h0: (a.int(), x.int(), h0), TypeError, "have dtype torch.int32"),
        (lambda a, x, h0: (a[..., :0], x[..., :0], h0), ValueError, "at least 1 step"),
        (
            lambda a, x, h0: (a.transpose(0, 1), x.transpose(0, 1), None),
            ValueError,
            "a is not contiguous: pass a.contiguous",
        ),
        (lambda a, x, h0: (a, x, h0[:1]), ValueError, r"h0 must be a tensor of shape \(2, 3\)"),
        (lambda a, x, h0: (a.cpu().numpy(), x, h0), TypeError, "must be torch tensors"),
    ],
)
def test_bad_inputs_are_refused_before_any_launch(change, error, message):
    lr = _example()
    a, x, h0, _, _ = _inputs((2, 3, 10))
    with pytest.raises(error, match=message):
        lr.linear_recurrence(*change(a, x, h0))


@pytest.mark.parametrize("how", [{"items": 0}, {"threads": 0}, {"threads": 64.0}])
def test_a_bad_block_shape_is_refused_before_any_launch(how):
    lr = _example()
    a, x, h0, _, _ = _inputs((2, 3, 10))
    with pytest.raises(ValueError, match=r"must be a positive int or None"):
        lr.linear_recurrence(a, x, h0, **how)


@pytest.mark.skipif(not GPU_BACKEND, reason="a CPU tensor is refused on a GPU only")
def test_cpu_tensors_are_refused_on_a_gpu():
    lr = _example()
    a, x, _, _, _ = _inputs((2, 3, 10))
    with pytest.raises(ValueError, match=r"a is on cpu: the kernels need CUDA tensors"):
        lr.linear_recurrence(a.cpu(), x.cpu())
