"""ravel_pytree against jax.flatten_util: the vector, the rebuilt tree, dtypes, its errors,
and derivatives through both directions."""
import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.flatten_util import ravel_pytree


def _tree():
    return {"w": fnp.asarray(np.arange(6.0).reshape(2, 3)), "b": [fnp.asarray(np.ones(2)),
            fnp.asarray(np.array([1, 2], dtype=np.int32))], "s": fnp.asarray(3.0)}


def test_ravel_pytree_round_trip_keeps_shapes_and_dtypes():
    tree = _tree()
    flat, unravel = ravel_pytree(tree)
    assert flat.shape == (11,) and flat.dtype == np.float64
    back = unravel(flat)
    assert funcgrad.tree_util.tree_structure(back) == funcgrad.tree_util.tree_structure(tree)
    for a, b in zip(funcgrad.tree_util.tree_leaves(back), funcgrad.tree_util.tree_leaves(tree)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_ravel_pytree_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.flatten_util import ravel_pytree as jax_ravel
    tree = {"a": np.ones(2, np.float32), "b": np.arange(4, dtype=np.float32).reshape(2, 2)}
    want, _ = jax_ravel(jax.tree_util.tree_map(jax.numpy.asarray, tree))
    got, unravel = ravel_pytree(tree)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    mixed = {"i": np.ones(2, np.int32), "f": np.ones(1, np.float32)}
    flat_mixed, unravel_mixed = ravel_pytree(mixed)
    assert flat_mixed.dtype == jax_ravel(mixed)[0].dtype == np.float32  # JAX's lattice
    assert unravel_mixed(fnp.zeros(3, dtype=np.float32))["i"].dtype == np.int32
    empty, unravel_empty = ravel_pytree([])
    assert empty.shape == (0,) and unravel_empty(empty) == []


def test_unravel_errors_name_the_expected_shape_and_dtype():
    _, unravel = ravel_pytree(_tree())
    with pytest.raises(ValueError, match=r"expected an array of shape \(11,\), got shape \(3,\)"):
        unravel(fnp.ones(3))
    with pytest.raises(TypeError, match="given array of dtype float32, but expected dtype "
                                        "float64"):
        unravel(fnp.ones(11, dtype=np.float32))


def test_gradients_flow_through_ravel_and_unravel():
    params = {"w": fnp.asarray([1.0, 2.0]), "b": fnp.asarray(3.0)}
    flat, unravel = ravel_pytree(params)

    def loss_of_vector(v):
        p = unravel(v)
        return fnp.sum(p["w"] ** 2) * p["b"]
    g = funcgrad.grad(loss_of_vector)(flat)
    np.testing.assert_allclose(np.asarray(g), [5.0, 6.0, 12.0])  # ravel order: b, then w
    g_tree = funcgrad.grad(lambda p: fnp.sum(ravel_pytree(p)[0] ** 2))(params)
    np.testing.assert_allclose(np.asarray(g_tree["w"]), [2.0, 4.0])
    jitted = funcgrad.jit(lambda v: unravel(v)["w"] * 2)(flat)
    np.testing.assert_array_equal(np.asarray(jitted), [2.0, 4.0])
