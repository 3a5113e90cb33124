"""funcgrad.nn.initializers: JAX's API (factories returning init(key, shape, dtype)),
the fans and variances of variance_scaling by moments, orthogonality, determinism per key,
and JAX's error texts. Draws come from funcgrad.random (or its stand-in, see
random_standin.py): statistics are checked, not exact numbers."""
import math

import numpy as np
import pytest

from funcgrad.nn import initializers as init


def _np(x):
    return np.asarray(x.to_numpy())


@pytest.mark.parametrize("name,scale,mode,uniform", [
    ("glorot_uniform", 1.0, "fan_avg", True), ("glorot_normal", 1.0, "fan_avg", False),
    ("xavier_uniform", 1.0, "fan_avg", True), ("xavier_normal", 1.0, "fan_avg", False),
    ("lecun_uniform", 1.0, "fan_in", True), ("lecun_normal", 1.0, "fan_in", False),
    ("he_uniform", 2.0, "fan_in", True), ("he_normal", 2.0, "fan_in", False),
    ("kaiming_uniform", 2.0, "fan_in", True), ("kaiming_normal", 2.0, "fan_in", False)])
def test_variance_scaling_family(random, name, scale, mode, uniform):
    shape = (3, 3, 40, 60)  # receptive field 9, fan_in 360, fan_out 540
    w = _np(getattr(init, name)()(random.PRNGKey(0), shape))
    assert w.shape == shape and w.dtype == np.float64
    fan = {"fan_in": 360.0, "fan_avg": 450.0}[mode]
    variance = scale / fan
    assert abs(w.var() / variance - 1) < 0.05, (w.var(), variance)
    bound = math.sqrt(3 * variance) if uniform else 2 * math.sqrt(variance) / 0.8796256610342398
    assert np.abs(w).max() <= bound * (1 + 1e-12)
    assert abs(w.mean()) < 0.05 * math.sqrt(variance)


def test_variance_scaling_modes_axes_and_errors(random):
    key = random.PRNGKey(1)
    w = _np(init.variance_scaling(2.0, "fan_out", "normal")(key, (50, 200)))
    assert abs(w.var() / (2.0 / 200) - 1) < 0.05
    w = _np(init.variance_scaling(1.0, "fan_geo_avg", "uniform")(key, (100, 400)))
    assert abs(w.var() / (1.0 / 200) - 1) < 0.05
    # in_axis / out_axis / batch_axis pick the fans: (batch, out, in)
    w = _np(init.variance_scaling(1.0, "fan_in", "normal", in_axis=2, out_axis=1,
                                  batch_axis=0)(key, (8, 30, 500)))
    assert abs(w.var() / (1.0 / 500) - 1) < 0.05
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer"):
        init.variance_scaling(1.0, "fan_max", "normal")
    with pytest.raises(ValueError, match="invalid distribution for variance scaling"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="Must be at least 2D"):
        init.glorot_normal()(key, (5,))
    with pytest.raises(NotImplementedError, match="complex"):
        init.glorot_normal()(key, (5, 5), np.complex64)


def test_dtype_and_determinism(random):
    key = random.PRNGKey(7)
    for make in (init.glorot_normal(), init.normal(), init.uniform(), init.orthogonal(),
                 init.truncated_normal(), init.he_uniform()):
        a, b = make(key, (6, 4)), make(key, (6, 4))
        np.testing.assert_array_equal(_np(a), _np(b))
        assert make(key, (6, 4), np.float32).dtype == np.float32
    other = init.glorot_normal()(random.PRNGKey(8), (6, 4))
    assert not np.array_equal(_np(other), _np(init.glorot_normal()(key, (6, 4))))
    assert init.glorot_normal(dtype=np.float32)(key, (3, 3)).dtype == np.float32


def test_simple_initializers(random):
    key = random.PRNGKey(2)
    np.testing.assert_array_equal(_np(init.zeros(key, (2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(_np(init.ones(key, (2,))), np.ones(2))
    np.testing.assert_array_equal(_np(init.constant(-0.5)(key, (2, 2))), np.full((2, 2), -0.5))
    w = _np(init.normal(0.3)(key, (200, 200)))
    assert abs(w.std() / 0.3 - 1) < 0.02
    w = _np(init.uniform(0.3)(key, (200, 200)))
    assert w.min() >= 0 and w.max() < 0.3 and abs(w.mean() / 0.15 - 1) < 0.02
    w = _np(init.truncated_normal(0.3, lower=-1.0, upper=0.5)(key, (200, 200)))
    assert w.min() >= -0.3 and w.max() <= 0.15


@pytest.mark.parametrize("shape,column_axis", [((5, 3), -1), ((3, 5), -1), ((2, 3, 12), -1),
                                                ((4, 6), 0)])
def test_orthogonal(random, shape, column_axis):
    w = _np(init.orthogonal(scale=2.0, column_axis=column_axis)(random.PRNGKey(3), shape))
    assert w.shape == shape
    cols = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis]) / 2.0
    gram = cols.T @ cols if cols.shape[0] >= cols.shape[1] else cols @ cols.T
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-12)
    with pytest.raises(ValueError, match="at least a 2D shape"):
        init.orthogonal()(random.PRNGKey(3), (4,))


def test_delta_orthogonal(random):
    w = _np(init.delta_orthogonal()(random.PRNGKey(4), (3, 3, 4, 6))).copy()
    centre = w[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(4), atol=1e-12)
    w[1, 1] = 0
    assert not w.any()
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(random.PRNGKey(4), (4, 6))
    with pytest.raises(ValueError, match="`fan_in` must be less or equal than `fan_out`"):
        init.delta_orthogonal()(random.PRNGKey(4), (3, 6, 4))
