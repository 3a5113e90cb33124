"""Sparse COO and CSR tensors against PyTorch: values, gradients (to the sparse values and
to the dense operands, masked where PyTorch masks them), printing, errors, and sparse
embedding gradients driving SGD, Adagrad and SparseAdam."""
from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import funcgrad.torch as F

INDICES = [[0, 1, 1, 0, 1], [2, 0, 2, 2, 1]]  # (0, 2) twice: an uncoalesced tensor
VALUES = [3.0, 4.0, 5.0, 1.0, -2.0]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # PyTorch's "sparse CSR support is in beta" notices
        warnings.simplefilter("ignore")
        yield


def _dense(m, t):
    return None if t is None else (t.to_dense() if t.layout is not m.strided else t).numpy()


def _run(m, program):
    s = m.sparse_coo_tensor(INDICES, m.tensor(VALUES, dtype=m.float64), (2, 3),
                            requires_grad=True)
    d = m.tensor(np.arange(6.0).reshape(3, 2) / 3, dtype=m.float64, requires_grad=True)
    out = program(m, s, d)
    layout = out.layout.name if hasattr(out.layout, "name") else str(out.layout)
    dense = out.to_dense() if out.layout is not m.strided else out
    (dense ** 2).sum().backward()
    return (layout.replace("torch.", ""), dense.detach().numpy(), _dense(m, s.grad),
            None if s.grad is None else s.grad.layout is m.strided, _dense(m, d.grad))


PROGRAMS = {
    "sparse.mm": lambda m, s, d: m.sparse.mm(s, d),
    "matmul": lambda m, s, d: s @ d,
    "mm": lambda m, s, d: m.mm(s, d),
    "mv": lambda m, s, d: m.mv(s, d[:, 0]),
    "dense @ sparse": lambda m, s, d: d @ s,
    "sparse.mm(sparse, sparse)": lambda m, s, d: m.sparse.mm(s, s.t()),
    "sparse.addmm": lambda m, s, d: m.sparse.addmm(d[:2], s, d, beta=0.5, alpha=2.0),
    "sparse.softmax": lambda m, s, d: m.sparse.softmax(s, 1),
    "sparse.log_softmax": lambda m, s, d: m.sparse.log_softmax(s, 0),
    "sparse.sum(dim)": lambda m, s, d: m.sparse.sum(s, 0),
    "sparse.sum": lambda m, s, d: m.sparse.sum(s),
    "sum": lambda m, s, d: s.sum(),
    "scalar products": lambda m, s, d: s * 2.5 + 2 * s - s / 4,
    "sparse * dense": lambda m, s, d: s * d.t(),
    "sparse * sparse": lambda m, s, d: s * s,
    "abs": lambda m, s, d: s.abs(),
    "neg, sub": lambda m, s, d: -s - s * 3,
    "dense + sparse": lambda m, s, d: d.t() + s,
    "pow": lambda m, s, d: s.pow(3),
    "csr sparse.mm": lambda m, s, d: m.sparse.mm(s.to_sparse_csr(), d),
    "csr to_dense": lambda m, s, d: s.to_sparse_csr().to_dense(),
    "to_dense": lambda m, s, d: s.to_dense(),
    "coalesce": lambda m, s, d: s.coalesce() * 2,
    "transpose": lambda m, s, d: m.sparse.mm(s.t(), d[:2]),
    "dense to_sparse": lambda m, s, d: d.to_sparse() * 2,
    "dense to_sparse(1)": lambda m, s, d: d.to_sparse(1) * 2,
    "dense to_sparse_csr": lambda m, s, d: m.sparse.mm(d.t().to_sparse_csr(), d),
    "sparse_mask": lambda m, s, d: d.t().sparse_mask(s.coalesce()),
    "to(float32)": lambda m, s, d: s.to(m.float32).double(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sparse_ops_and_gradients_match_pytorch(real, name):
    ours, theirs = _run(F, PROGRAMS[name]), _run(real, PROGRAMS[name])
    assert ours[0] == theirs[0], "layout of the result"
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    for a, b in zip(ours[2:], theirs[2:]):
        if isinstance(b, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        else:
            assert a == b, "gradient missing or of another layout"


def test_printing_matches_pytorch(real):
    for m_ours, m_real in ((F, real),):
        for build in (lambda m: m.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True),
                      lambda m: m.sparse_coo_tensor(INDICES, m.tensor(VALUES, dtype=m.float64,
                                                                      requires_grad=True)),
                      lambda m: m.sparse_coo_tensor(INDICES, [1, 2, 3, 4, 5]),
                      lambda m: m.sparse_coo_tensor(m.zeros(2, 0, dtype=m.long), m.zeros(0),
                                                    (2, 2)),
                      lambda m: m.sparse_coo_tensor([[0, 2]], m.ones(2, 3)),
                      lambda m: m.sparse_coo_tensor(INDICES, VALUES).coalesce()
                      .to_sparse_csr().double(),
                      lambda m: m.sparse_coo_tensor(INDICES, VALUES).coalesce() * 2):
            assert repr(build(m_ours)) == repr(build(m_real))


def test_metadata_matches_pytorch(real):
    def facts(m):
        s = m.sparse_coo_tensor(INDICES, VALUES, (2, 3))
        c = s.coalesce()
        r = c.to_sparse_csr()
        return [tuple(s.shape), s.size(1), s.dim(), s.numel(), s._nnz(), s.sparse_dim(),
                s.dense_dim(), s.is_sparse, s.is_sparse_csr, s.is_coalesced(),
                c.is_coalesced(), s.t().is_coalesced(), (s * 2).is_coalesced(), len(s),
                str(s.layout), str(r.layout), r.is_sparse, r.is_sparse_csr,
                c.indices().tolist(), c.values().tolist(), r.crow_indices().tolist(),
                r.col_indices().tolist(), r.values().tolist(), str(s.dtype),
                str(m.zeros(1).layout), s.requires_grad, c.to_sparse().layout is m.sparse_coo,
                r.to_sparse().layout is m.sparse_coo, s._indices().tolist()]
    assert facts(F) == facts(real)


ERRORS = {
    "dense op": lambda m, s: m.exp(s),
    "dense method": lambda m, s: s.mean(),
    "view": lambda m, s: s.view(6),
    "indices of uncoalesced": lambda m, s: s.indices(),
    "values of uncoalesced": lambda m, s: s.values(),
    "to numpy": lambda m, s: s.numpy(),
    "add(sparse, dense)": lambda m, s: s + m.ones(2, 3),
    "sparse / dense": lambda m, s: s / m.ones(2, 3),
    "pow 0": lambda m, s: s.pow(0),
    "mm sizes": lambda m, s: m.mm(s, m.ones(2, 2)),
    "mm dtypes": lambda m, s: m.mm(s, m.ones(3, 2, dtype=m.float64)),
    "nnz mismatch": lambda m, s: m.sparse_coo_tensor(INDICES, m.ones(4)),
    "indices rank": lambda m, s: m.sparse_coo_tensor(INDICES[0], m.ones(5)),
    "len(size)": lambda m, s: m.sparse_coo_tensor(INDICES, m.ones(5), (2, 3, 4)),
    "index out of size": lambda m, s: m.sparse_coo_tensor(INDICES, m.ones(5), (1, 3),
                                                          check_invariants=True),
    "negative index": lambda m, s: m.sparse_coo_tensor([[-1]], m.ones(1), (2,),
                                                       check_invariants=True),
    "csr last row pointer": lambda m, s: m.sparse_csr_tensor(
        m.tensor([0, 1, 3]), m.tensor([1, 0]), m.ones(2), check_invariants=True),
    "csr column": lambda m, s: m.sparse_csr_tensor(
        m.tensor([0, 1, 2]), m.tensor([1, 5]), m.ones(2), (2, 2), check_invariants=True),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(real, name):
    raised = []
    for m in (F, real):
        s = m.sparse_coo_tensor(INDICES, VALUES, (2, 3))
        with pytest.raises(Exception) as info:
            ERRORS[name](m, s)
        message = str(info.value).split("\n")[0]
        if isinstance(info.value, NotImplementedError):  # (the backends listed vary)
            message = message.split(" This could be")[0].replace(".dim'", "'")
        raised.append((type(info.value).__name__, message))
    assert raised[0] == raised[1]


def test_out_of_bounds_indices_are_refused_without_check_invariants():
    """PyTorch accepts them unless asked to check (then scatters out of bounds); the
    facade always checks."""
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        F.sparse_coo_tensor(INDICES, F.ones(5), (1, 3))


def test_unsupported_members_refuse_rather_than_use_the_values_alone():
    s = F.sparse_coo_tensor(INDICES, VALUES, (2, 3))
    for use in (lambda: s[0], lambda: s.reshape(6), lambda: s.item(), lambda: s.tolist(),
                lambda: s.copy_(s), lambda: s.zero_(), lambda: list(s), lambda: s.real,
                lambda: float(s)):
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            use()


def _embedding_training(m, optimizer, steps=4, **options):
    m.manual_seed(0)
    emb = m.nn.Embedding(6, 3, sparse=True, padding_idx=1)
    with m.no_grad():
        emb.weight.copy_(m.tensor(np.sin(np.arange(18.0)).reshape(6, 3), dtype=m.float32))
    opt = getattr(m.optim, optimizer)(emb.parameters(), lr=0.1, **options)
    grads = []
    for k in range(steps):
        opt.zero_grad()
        (emb(m.tensor([[0, 1, 0], [3, 4, k % 6]])) ** 2).sum().backward()
        grads.append(repr(emb.weight.grad))
        opt.step()
    return emb.weight.detach().numpy(), grads


@pytest.mark.parametrize("optimizer, options", [
    ("SparseAdam", {}), ("SparseAdam", {"maximize": True}), ("SGD", {}),
    ("SGD", {"momentum": 0.9}), ("SGD", {"momentum": 0.9, "nesterov": True}),
    ("Adagrad", {}), ("Adagrad", {"lr_decay": 0.1})])
def test_sparse_embedding_gradients_train_as_in_pytorch(real, optimizer, options):
    (ours, our_grads), (theirs, their_grads) = (_embedding_training(m, optimizer, **options)
                                                for m in (F, real))
    assert our_grads[0] == their_grads[0]  # a sparse gradient, padding lookups left out
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-7)


@pytest.mark.parametrize("optimizer, options", [
    ("Adam", {}), ("AdamW", {}), ("RMSprop", {}), ("SGD", {"weight_decay": 0.1}),
    ("Adagrad", {"weight_decay": 0.1})])
def test_optimizers_refuse_sparse_gradients_as_pytorch(real, optimizer, options):
    raised = []
    for m in (F, real):
        with pytest.raises(RuntimeError) as info:
            _embedding_training(m, optimizer, steps=1, **options)
        raised.append(str(info.value))
    assert raised[0] == raised[1]


def test_sparse_adam_refuses_dense_gradients(real):
    raised = []
    for m in (F, real):
        w = m.nn.Parameter(m.ones(3))
        opt = m.optim.SparseAdam([w])
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        raised.append(str(info.value))
    assert raised[0] == raised[1]


def test_embedding_bag_sparse_gradient(real):
    def grad(m):
        bag = m.nn.EmbeddingBag(5, 2, mode="sum", sparse=True)
        with m.no_grad():
            bag.weight.copy_(m.arange(10.0).reshape(5, 2))
        bag(m.tensor([[0, 2], [4, 2]])).pow(2).sum().backward()
        return bag.weight.grad.layout is m.sparse_coo, bag.weight.grad.to_dense().numpy()
    (a, ga), (b, gb) = grad(F), grad(real)
    assert a and b
    np.testing.assert_allclose(ga, gb)


def test_a_leaf_given_both_masked_and_dense_gradients_gets_their_dense_sum(real):
    def grad(m):
        s = m.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True)
        (m.sparse.sum(s) + (s @ m.ones(3, 1)).sum()).backward()
        return s.grad.to_dense().numpy() if s.grad.layout is not m.strided else s.grad.numpy()
    np.testing.assert_allclose(grad(F), grad(real))


def test_sparse_gradients_under_create_graph_keep_the_pattern():
    s = F.sparse_coo_tensor(INDICES, VALUES, (2, 3), requires_grad=True)
    (F.sparse.sum(s) * 3).backward(create_graph=True)
    assert s.grad.is_sparse and s.grad.to_dense().tolist() == [[0, 0, 3], [3, 3, 3]]


def test_the_sparse_gcn_example_learns_and_matches_pytorch(real):
    path = Path(__file__).resolve().parents[2] / "examples" / "sparse_gcn.py"
    spec = importlib.util.spec_from_file_location("example_sparse_gcn", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    F.manual_seed(0)
    ours = example.train(F)
    assert ours["losses"][-1] < 0.1 * ours["losses"][0] and ours["accuracy"] >= 0.9
    theirs = example.train(real, state=ours["initial_state"])
    np.testing.assert_allclose(ours["losses"], theirs["losses"], rtol=1e-4, atol=1e-6)
    assert ours["accuracy"] == theirs["accuracy"]
