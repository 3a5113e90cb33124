"""ATen's lower-level torch.* names (`funcgrad.torch._aten_native`) against PyTorch: the
same call on both libraries, values (and gradients where the op is differentiable)."""
import numpy as np
import pytest

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):  # the tests/torch folder itself, seen as a namespace
    pytest.skip("PyTorch is not installed", allow_module_level=True)

RNG = np.random.default_rng(3)
X4 = RNG.standard_normal((2, 3, 4, 5))
X2 = RNG.standard_normal((6, 3))


def _numpy(x):
    if isinstance(x, (tuple, list)):
        return tuple(_numpy(v) for v in x)
    return x.detach().numpy() if hasattr(x, "detach") else x


def _same(fn, atol=1e-12):
    ours, theirs = (_numpy(fn(lib)) for lib in (ftorch, torch))
    _close(ours, theirs, atol)


def _close(a, b, atol):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, atol)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=atol)


def t(lib, values, **kw):
    return lib.tensor(values, dtype=lib.float64, **kw)


CASES = {
    "native_layer_norm": lambda L: L.native_layer_norm(t(L, X4), (4, 5), t(L, np.ones((4, 5))),
                                                       None, 1e-5),
    "native_group_norm": lambda L: L.native_group_norm(t(L, X4[:, :2].reshape(2, 2, 20)), None,
                                                       None, 2, 2, 20, 1, 1e-5),
    "native_batch_norm_train": lambda L: (
        *L.native_batch_norm(t(L, X4), None, None, t(L, np.zeros(3)), t(L, np.ones(3)), True,
                             0.1, 1e-5),),
    "native_batch_norm_eval": lambda L: L.native_batch_norm(
        t(L, X4), t(L, np.ones(3) * 2), None, t(L, np.zeros(3)), t(L, np.ones(3)), False, 0.1,
        1e-5),
    "native_dropout_eval": lambda L: L.native_dropout(t(L, X2), 0.5, False),
    "native_channel_shuffle": lambda L: L.native_channel_shuffle(t(L, X4[:, :2]), 2),
    "convolution": lambda L: L.convolution(t(L, X4), t(L, X4[:2, :3, :3, :3]), None, [1, 2],
                                           [1, 0], [1, 1], False, [0, 0], 1),
    "convolution_transposed": lambda L: L.convolution(
        t(L, X4), t(L, X4[:, :, :3, :3].transpose(1, 0, 2, 3)), t(L, [0.5, -0.5]), [2, 1],
        [1, 0], [1, 1], True, [1, 0], 1),
    "constant_pad_nd": lambda L: L.constant_pad_nd(t(L, X2), [1, 2], 3.5),
    "grid_sampler": lambda L: L.grid_sampler(t(L, X4), t(L, np.tanh(RNG.standard_normal(
        (2, 3, 3, 2)))), 0, 1, False),
    "affine_grid_generator": lambda L: L.affine_grid_generator(t(L, X4[:, 0, :2, :3]),
                                                               [2, 1, 3, 4], False),
    "batch_norm_update_stats": lambda L: L.batch_norm_update_stats(
        t(L, X4), t(L, np.zeros(3)), t(L, np.ones(3)), 0.2),
    "norms": lambda L: (L.frobenius_norm(t(L, X4), [1, 2]), L.nuclear_norm(t(L, X2)),
                        L.nuclear_norm(t(L, X4), [2, 3], True),
                        L.norm_except_dim(t(L, X4), 2, 1)),
    "feature_dropout_eval": lambda L: L.feature_dropout(t(L, X4), 0.5, False),
    "lstm_cell": lambda L: L.lstm_cell(t(L, X2[:2]), (t(L, X2[2:4, :2]), t(L, X2[4:, :2])),
                                       t(L, RNG.standard_normal((8, 3))),
                                       t(L, RNG.standard_normal((8, 2))), None, None),
    "gru_cell": lambda L: L.gru_cell(t(L, X2[:2]), t(L, X2[2:4, :2]),
                                     t(L, RNG.standard_normal((6, 3))),
                                     t(L, RNG.standard_normal((6, 2))),
                                     t(L, RNG.standard_normal(6)), None),
    "rnn_cells": lambda L: (L.rnn_tanh_cell(t(L, X2[:2]), t(L, X2[2:4, :2]), t(L, X2[:2]),
                                            t(L, X2[2:4, :2])),
                            L.rnn_relu_cell(t(L, X2[:2]), t(L, X2[2:4, :2]), t(L, X2[:2]),
                                            t(L, X2[2:4, :2]))),
    "grid_sampler_3d": lambda L: L.grid_sampler_3d(
        t(L, X4[:, :, :3, :4, None].repeat(2, -1)),
        t(L, np.tanh(RNG.standard_normal((2, 2, 3, 2, 3)))), 1, 0, True),
    "feature_dropout_inplace_eval": lambda L: L.feature_dropout_(t(L, X4), 0.5, False),
    "histogramdd": lambda L: L.histogramdd(t(L, X2[:, :2]), [3, 4]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_are_pytorchs(name):
    state = RNG.bit_generator.state
    outs = []
    for lib in (ftorch, torch):
        RNG.bit_generator.state = state  # the same random inputs for both
        outs.append(_numpy(CASES[name](lib)))
    _close(outs[0], outs[1], 1e-10)


def test_synchronised_batch_norm_statistics():
    """PyTorch has these on CUDA only (its CPU raises NotImplementedError); the facade's
    CPU ones are checked against the formulas: per-process (mean, invstd), normalisation with
    them, and their combination over processes weighted by counts, which also updates the
    running statistics with the unbiased variance."""
    x = t(ftorch, X4)
    mean, invstd = ftorch.batch_norm_stats(x, 1e-5)
    np.testing.assert_allclose(mean.numpy(), X4.mean((0, 2, 3)), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(X4.var((0, 2, 3)) + 1e-5),
                               rtol=1e-12)
    out = ftorch.batch_norm_elemt(x, t(ftorch, [1.0, 2.0, 3.0]), None, mean, invstd, 1e-5)
    expected = (X4 - X4.mean((0, 2, 3))[:, None, None]) / np.sqrt(
        X4.var((0, 2, 3))[:, None, None] + 1e-5) * np.array([1.0, 2.0, 3.0])[:, None, None]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    halves = [X4[:, :, :2], X4[:, :, 2:]]  # two "processes", 20 values per channel each
    stats = [ftorch.batch_norm_stats(t(ftorch, h), 1e-5) for h in halves]
    rm, rv = t(ftorch, np.zeros(3)), t(ftorch, np.ones(3))
    g_mean, g_invstd = ftorch.batch_norm_gather_stats_with_counts(
        x, ftorch.stack([s[0] for s in stats]), ftorch.stack([s[1] for s in stats]), rm, rv,
        0.1, 1e-5, t(ftorch, [20.0, 20.0]))
    np.testing.assert_allclose(g_mean.numpy(), mean.numpy(), rtol=1e-10)
    np.testing.assert_allclose(g_invstd.numpy(), invstd.numpy(), rtol=1e-8)
    np.testing.assert_allclose(rm.numpy(), 0.1 * X4.mean((0, 2, 3)), rtol=1e-10)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * X4.var((0, 2, 3), ddof=1), rtol=1e-8)


def test_layer_norm_statistics_are_differentiable_as_the_output():
    def run(lib):
        x = t(lib, X4, requires_grad=True)
        out, mean, rstd = lib.native_layer_norm(x, (5,), None, None, 1e-5)
        (out * t(lib, X4)).sum().backward()
        return out, x.grad
    _same(run, atol=1e-10)


def test_empty_permuted_lays_out_memory_in_the_given_order():
    for lib in (ftorch, torch):
        e = lib.empty_permuted((2, 3, 4), (0, 2, 1))
        assert tuple(e.shape) == (2, 3, 4) and e.stride() == (12, 1, 3)


def test_cond_and_while_loop_run_eagerly():
    """(On the facade only: PyTorch's eager torch.cond compiles the call with dynamo, whose
    frame hooks and switched-off distribution validation would outlive the test.)"""
    for lib in (ftorch,):
        x = lib.ones(3)
        assert lib.cond(x.sum() > 2, lambda v: v + 1, lambda v: v - 1, (x,)).tolist() == \
            [2.0, 2.0, 2.0]
        assert lib.cond(False, lambda v: v + 1, lambda v: v - 1, (x,)).tolist() == \
            [0.0, 0.0, 0.0]
        i, acc = lib.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2),
                                (lib.tensor(0), lib.ones(2)))
        assert int(i) == 4 and acc.tolist() == [16.0, 16.0]
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element"):
        ftorch.cond(ftorch.ones(2) > 0, lambda: 1, lambda: 2)


def test_namespace_flags_and_aliases():
    assert ftorch.get_device_module("cpu") is ftorch.cpu
    assert ftorch.get_device_module("cuda:0") is ftorch.cuda
    assert ftorch.cuda.OutOfMemoryError is ftorch.OutOfMemoryError
    assert issubclass(ftorch.OutOfMemoryError, RuntimeError)
    assert ftorch.has_lapack and ftorch.compiled_with_cxx11_abi()
    assert ftorch.Future is ftorch.futures.Future
    x = ftorch.zeros(3)
    assert ftorch.fill_(x, 2.0) is x and x.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("name", ftorch.signal.windows.__all__)
def test_signal_windows_are_pytorchs(name):
    kwargs = {"a": [0.5, 0.3, 0.2]} if name == "general_cosine" else {}
    for M in (0, 1, 2, 7, 8):
        for sym in (True, False):
            ours, theirs = (getattr(lib.signal.windows, name)(M, sym=sym, dtype=lib.float64,
                                                             **kwargs).numpy()
                            for lib in (ftorch, torch))
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    for lib in (ftorch, torch):
        with pytest.raises(ValueError, match="requires non-negative window length, got M=-1"):
            getattr(lib.signal.windows, name)(-1, **kwargs)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce(reduce):
    data = np.arange(10.0).reshape(5, 2)
    for initial in (None, 7.0):
        ours, theirs = (lib.segment_reduce(lib.tensor(data), reduce,
                                           lengths=lib.tensor([2, 0, 3]),
                                           initial=initial).numpy()
                        for lib in (ftorch, torch))
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    x = ftorch.tensor(data, requires_grad=True)
    ftorch.segment_reduce(x, reduce, offsets=ftorch.tensor([0, 2, 5])).sum().backward()
    y = torch.tensor(data, requires_grad=True)
    torch.segment_reduce(y, reduce, offsets=torch.tensor([0, 2, 5])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12)


def test_conv_tbc_lowrank_and_named_linalg_results():
    tbc = RNG.standard_normal((5, 2, 3))  # (time, batch, channels)
    kernel = RNG.standard_normal((3, 3, 4))  # (width, in, out)
    _same(lambda L: L.conv_tbc(t(L, tbc), t(L, kernel), t(L, np.arange(4.0)), 1), atol=1e-10)
    low = X2 @ RNG.standard_normal((3, 5))  # rank 3
    U, S, V = ftorch.svd_lowrank(t(ftorch, low), q=4)
    np.testing.assert_allclose((U @ ftorch.diag(S) @ V.mT).numpy(), low, atol=1e-10)
    _, S_pca, _ = ftorch.pca_lowrank(t(ftorch, low), q=3)
    np.testing.assert_allclose(S_pca.numpy(), torch.pca_lowrank(t(torch, low), q=3)[1].numpy(),
                               rtol=1e-10)
    for lib in (ftorch, torch):
        qr = lib.linalg.qr(t(lib, X2))
        assert tuple(qr.Q.shape) == (6, 3) and tuple(qr.R.shape) == (3, 3)
        assert type(qr).__name__ == "linalg_qr"
        assert lib.linalg.eigh(lib.eye(2)).eigenvalues.tolist() == [1.0, 1.0]


def test_from_file_reads_raw_bytes_and_maps_shared(tmp_path):
    path = tmp_path / "raw.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    for lib in (ftorch, torch):
        assert lib.from_file(str(path), size=6).tolist() == [0, 1, 2, 3, 4, 5]
    mapped = ftorch.from_file(str(path), shared=True, size=6)
    mapped[0] = 42
    del mapped
    assert np.fromfile(path, np.float32)[0] == 42


def _child(i, values):
    if values[i] < 0:
        raise ValueError(f"child {i} got a negative value")


def test_multiprocessing_spawn_raises_the_childs_error():
    mp = ftorch.multiprocessing
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.spawn(_child, args=([1, 2],), nprocs=2, start_method="fork")
    with pytest.raises(mp.ProcessRaisedException, match="child 1 got a negative value"):
        mp.spawn(_child, args=([1, -2],), nprocs=2, start_method="fork")
    assert mp.Queue is not None and mp.get_context is not None


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional,batch_first", [(False, False), (True, True)])
def test_whole_sequence_rnn_calls(mode, bidirectional, batch_first):
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    dirs = 2 if bidirectional else 1
    rng = np.random.default_rng(5)
    params = []
    for layer in range(2):
        width = 3 if layer == 0 else 4 * dirs
        for _ in range(dirs):
            params += [rng.standard_normal((gates * 4, width)),
                       rng.standard_normal((gates * 4, 4)), rng.standard_normal(gates * 4),
                       rng.standard_normal(gates * 4)]
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    h0 = rng.standard_normal((2 * dirs, 2, 4))

    def run(lib):
        ws = [t(lib, p, requires_grad=True) for p in params]
        hx = (t(lib, h0), t(lib, h0 * 0.5)) if mode == "lstm" else t(lib, h0)
        outs = getattr(lib, mode)(t(lib, x), hx, ws, True, 2, 0.0, False, bidirectional,
                                  batch_first)
        sum(o.sum() for o in outs).backward()
        return (*outs, ws[0].grad, ws[-1].grad)
    _same(run, atol=1e-10)
