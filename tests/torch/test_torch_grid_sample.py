"""F.grid_sample against PyTorch: values and the gradients of input and grid, every mode,
padding mode and align_corners, 2-D and 3-D; its errors; and the array form under jit."""
import itertools
import warnings

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.torch as fg
import funcgrad.torch.nn.functional as F

torch = pytest.importorskip("torch")

MODES_2D = list(itertools.product(("bilinear", "nearest", "bicubic"),
                                  ("zeros", "border", "reflection"), (False, True)))
MODES_3D = list(itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"),
                                  (False, True)))


def _inputs(spatial, out, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(2, 3, *spatial)
    # points inside and outside [-1, 1], away from the kinks where the derivative jumps
    grid = rng.uniform(-1.4, 1.4, (2, *out, len(spatial)))
    return x, grid


def _both(x, grid, **kw):
    tx = torch.tensor(x, requires_grad=True)
    tg = torch.tensor(grid, requires_grad=True)
    fx = fg.tensor(x, requires_grad=True)
    fgd = fg.tensor(grid, requires_grad=True)
    want = torch.nn.functional.grid_sample(tx, tg, **kw)
    got = F.grid_sample(fx, fgd, **kw)
    weights = np.random.RandomState(1).randn(*want.shape)
    (want * torch.tensor(weights)).sum().backward()
    (got * fg.tensor(weights)).sum().backward()
    return (want, tx.grad, tg.grad), (got, fx.grad, fgd.grad)


@pytest.mark.parametrize("mode,padding_mode,align_corners", MODES_2D)
def test_grid_sample_2d_matches_pytorch(mode, padding_mode, align_corners):
    x, grid = _inputs((4, 5), (3, 6), seed=len(mode) + len(padding_mode) + align_corners)
    want, got = _both(x, grid, mode=mode, padding_mode=padding_mode,
                      align_corners=align_corners)
    assert got[0].grad_fn.name() == "GridSampler2DBackward0"
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)


@pytest.mark.parametrize("mode,padding_mode,align_corners", MODES_3D)
def test_grid_sample_3d_matches_pytorch(mode, padding_mode, align_corners):
    x, grid = _inputs((3, 4, 2), (2, 3, 2), seed=7)
    want, got = _both(x, grid, mode=mode, padding_mode=padding_mode,
                      align_corners=align_corners)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-10,
                                   atol=1e-10)


def test_grid_sample_float32_and_default_align_corners_warning():
    x, grid = _inputs((4, 4), (2, 2), seed=3)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        got = F.grid_sample(fg.tensor(x, dtype=fg.float32), fg.tensor(grid, dtype=fg.float32))
    want = torch.nn.functional.grid_sample(torch.tensor(x, dtype=torch.float32),
                                           torch.tensor(grid, dtype=torch.float32),
                                           align_corners=False)
    assert got.dtype == fg.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape,grid_shape,kw,error", [
    ((1, 2, 3, 3), (1, 2, 2, 3), {}, RuntimeError),
    ((1, 2, 3, 3, 3), (1, 2, 2, 2, 3), {"mode": "bicubic"}, RuntimeError),
    ((1, 2, 3, 3), (1, 2, 2, 2, 2), {}, RuntimeError),
    ((1, 2, 3, 3), (2, 2, 2, 2), {}, RuntimeError),
    ((1, 2, 3, 3), (1, 2, 2, 2), {"mode": "foo"}, ValueError),
    ((1, 2, 3, 3), (1, 2, 2, 2), {"padding_mode": "foo"}, ValueError),
])
def test_grid_sample_errors_are_pytorchs(x_shape, grid_shape, kw, error):
    x, grid = np.zeros(x_shape), np.zeros(grid_shape)
    with pytest.raises(error) as want:
        torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(grid),
                                        align_corners=False, **kw)
    with pytest.raises(error) as got:
        F.grid_sample(fg.tensor(x), fg.tensor(grid), align_corners=False, **kw)
    assert str(got.value) == str(want.value)


def test_grid_sample_dtype_mismatch_is_pytorchs_error():
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        F.grid_sample(fg.zeros(1, 1, 2, 2, dtype=fg.float64), fg.zeros(1, 1, 1, 2),
                      align_corners=False)


def test_array_grid_sample_under_jit_and_second_order():
    x, grid = _inputs((4, 5), (3, 3), seed=5)
    f = lambda x, g: funcgrad.nn.grid_sample(x, g, "bicubic", "reflection", False)
    eager = f(fnp.asarray(x), fnp.asarray(grid))
    np.testing.assert_array_equal(np.asarray(funcgrad.jit(f)(fnp.asarray(x),
                                                             fnp.asarray(grid))),
                                  np.asarray(eager))
    loss = lambda g: fnp.sum(f(fnp.asarray(x), g) ** 2)
    funcgrad.test_util.check_grads(loss, (fnp.asarray(grid),), order=2, modes=("rev",))
