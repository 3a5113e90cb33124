"""nn.RNN / nn.LSTM / nn.GRU, their cells and torch.nn.utils.rnn against PyTorch: the
same weights (PyTorch's, copied with load_state_dict) give the same outputs, final states
and gradients of the input, the initial state and every parameter, for each option."""
import importlib.util
import warnings
from pathlib import Path

import numpy as np
import pytest

import funcgrad.torch as ft

torch = pytest.importorskip("torch")
if not hasattr(torch, "tensor"):
    pytest.skip("PyTorch is not installed", allow_module_level=True)

TOL = dict(rtol=1e-9, atol=1e-11)


def ours_of(a, grad=True):
    t = ft.tensor(np.asarray(a))
    return t.requires_grad_(True) if grad and t.dtype.is_floating_point else t


def theirs_of(a, grad=True):
    t = torch.tensor(np.asarray(a))
    return t.requires_grad_(True) if grad and t.dtype.is_floating_point else t


def twin(cls_name, *args, **kwargs):
    """(PyTorch's module, ours with its weights), both float64."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls_name)(*args, **kwargs).double()
    ours = getattr(ft.nn, cls_name)(*args, **kwargs).double()
    state = {k: ft.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    assert list(state) == list(ours.state_dict())
    ours.load_state_dict(state)
    return theirs, ours


def flat(out):
    """The tensors of a (nested) output: tensors, tuples, PackedSequences (their data)."""
    if isinstance(out, (tuple, list)) and hasattr(out, "batch_sizes"):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def backward_all(outs, T):
    rng = np.random.RandomState(3)
    total = 0
    for o in outs:
        total = total + (o * T.tensor(rng.uniform(-1, 1, tuple(o.shape)))).sum()
    total.backward()


def compare(theirs, ours, make_inputs):
    """Run each module on its own copy of the inputs; compare outputs and all grads."""
    made_t, made_o = [], []

    def recording(make, made):
        def wrapped(a):
            made.append(make(a))
            return made[-1]
        wrapped.lib = make
        return wrapped
    inputs_t = make_inputs(recording(theirs_of, made_t))
    inputs_o = make_inputs(recording(ours_of, made_o))
    out_t, out_o = theirs(*inputs_t), ours(*inputs_o)
    ft_, tt_ = flat(out_o), flat(out_t)
    assert len(ft_) == len(tt_)
    for a, b in zip(tt_, ft_):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **TOL)
    backward_all(tt_, torch)
    backward_all(ft_, ft)
    for (name, p), (name2, q) in zip(theirs.named_parameters(), ours.named_parameters()):
        assert name == name2
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), err_msg=name, **TOL)
    leaves_t = [t for t in made_t if t.requires_grad]
    leaves_o = [t for t in made_o if t.requires_grad]
    assert len(leaves_t) == len(leaves_o)
    for a, b in zip(leaves_t, leaves_o):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **TOL)
    return out_t, out_o


def state_for(mode, shape, cell_shape, rng):
    if mode == "LSTM":
        h, c = rng.randn(*shape), rng.randn(*cell_shape)
        return lambda T: (T(h), T(c))
    h = rng.randn(*shape)
    return lambda T: T(h)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True), (2, False),
                                                      (1, True)])
@pytest.mark.parametrize("batch_first,with_state", [(False, True), (True, False)])
def test_layers_match_pytorch(mode, num_layers, bidirectional, batch_first, with_state):
    T, B, F, H = 4, 3, 5, 6
    theirs, ours = twin(mode, F, H, num_layers=num_layers, bidirectional=bidirectional,
                        batch_first=batch_first)
    rng = np.random.RandomState(1)
    x = rng.randn(B, T, F) if batch_first else rng.randn(T, B, F)
    shape = (num_layers * (1 + bidirectional), B, H)
    state = state_for(mode, shape, shape, rng)

    def inputs(make):
        return (make(x), state(make)) if with_state else (make(x),)
    compare(theirs, ours, inputs)


@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
def test_lstm_projection_matches_pytorch(num_layers, bidirectional):
    T, B, F, H, P = 3, 2, 4, 5, 3
    theirs, ours = twin("LSTM", F, H, num_layers=num_layers, bidirectional=bidirectional,
                        proj_size=P)
    assert "weight_hr_l0" in dict(ours.named_parameters())
    rng = np.random.RandomState(2)
    x = rng.randn(T, B, F)
    d = num_layers * (1 + bidirectional)
    state = state_for("LSTM", (d, B, P), (d, B, H), rng)
    _, (o, (h, c)) = compare(theirs, ours, lambda make: (make(x), state(make)))
    assert tuple(o.shape) == (T, B, P * (1 + bidirectional)) and tuple(h.shape) == (d, B, P)
    assert tuple(c.shape) == (d, B, H)


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_input_matches_pytorch(mode, with_state):
    theirs, ours = twin(mode, 3, 4, num_layers=2, bidirectional=True)
    rng = np.random.RandomState(4)
    x = rng.randn(5, 3)
    state = state_for(mode, (4, 4), (4, 4), rng)
    _, (o, h) = compare(theirs, ours, lambda make: (make(x), state(make)) if with_state
                        else (make(x),))
    assert tuple(o.shape) == (5, 8)


def test_relu_nonlinearity_and_no_bias_match_pytorch():
    theirs, ours = twin("RNN", 3, 4, 2, "relu", False)
    assert ours.nonlinearity == "relu" and ours.bias is False
    assert [n for n, _ in ours.named_parameters()] == ["weight_ih_l0", "weight_hh_l0",
                                                       "weight_ih_l1", "weight_hh_l1"]
    x = np.random.RandomState(5).randn(4, 2, 3)
    compare(theirs, ours, lambda make: (make(x),))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_no_bias_matches_pytorch(mode):
    theirs, ours = twin(mode, 3, 4, bias=False, bidirectional=True)
    x = np.random.RandomState(5).randn(4, 2, 3)
    compare(theirs, ours, lambda make: (make(x),))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_input_gives_a_packed_output_as_pytorch(mode, enforce_sorted, bidirectional):
    theirs, ours = twin(mode, 3, 4, num_layers=2, bidirectional=bidirectional)
    rng = np.random.RandomState(6)
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 1, 3]
    x = rng.randn(max(lengths), len(lengths), 3)
    shape = (2 * (1 + bidirectional), len(lengths), 4)
    state = state_for(mode, shape, shape, rng)

    def inputs(make):
        lib = torch if make.lib is theirs_of else ft
        packed = lib.nn.utils.rnn.pack_padded_sequence(make(x), lengths,
                                                       enforce_sorted=enforce_sorted)
        return packed, state(make)
    out_t, out_o = compare(theirs, ours, inputs)
    assert type(out_o[0]).__name__ == "PackedSequence"
    for a, b in zip(out_t[0][1:], out_o[0][1:]):  # batch_sizes, sorted/unsorted indices
        assert (None if b is None else b.tolist()) == (None if a is None else a.tolist())
    padded_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(out_t[0])
    padded_o, len_o = ft.nn.utils.rnn.pad_packed_sequence(out_o[0])
    np.testing.assert_allclose(padded_o.detach().numpy(), padded_t.detach().numpy(), **TOL)
    assert len_o.tolist() == len_t.tolist() == lengths


def test_lstm_projection_with_packed_input():
    theirs, ours = twin("LSTM", 3, 5, proj_size=2, bidirectional=True)
    x = np.random.RandomState(7).randn(4, 3, 3)

    def inputs(make):
        lib = torch if make.lib is theirs_of else ft
        return (lib.nn.utils.rnn.pack_padded_sequence(make(x), [4, 2, 1]),)
    compare(theirs, ours, inputs)


def test_dropout_between_layers():
    """p=1 zeroes the first layer's output in training (deterministic), as PyTorch; eval
    mode and p=0 are the plain stack."""
    rng = np.random.RandomState(8)
    x = rng.randn(3, 2, 4)
    theirs, ours = twin("GRU", 4, 3, num_layers=2, dropout=1.0)
    compare(theirs, ours, lambda make: (make(x),))
    theirs.eval()
    ours.eval()
    compare(theirs, ours, lambda make: (make(x),))
    _, ours_half = twin("LSTM", 4, 3, num_layers=2, dropout=0.5)
    ours_half.train()
    ft.manual_seed(0)
    a, _ = ours_half(ft.tensor(x))
    ours_half.eval()
    b, _ = ours_half(ft.tensor(x))
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("cls,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                        ("RNNCell", {"bias": False}), ("LSTMCell", {}),
                                        ("LSTMCell", {"bias": False}), ("GRUCell", {}),
                                        ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells_match_pytorch(cls, kwargs, batched, with_state):
    theirs, ours = twin(cls, 3, 4, **kwargs)
    rng = np.random.RandomState(9)
    lead = (2,) if batched else ()
    x = rng.randn(*lead, 3)
    state = state_for("LSTM" if cls == "LSTMCell" else "RNN", lead + (4,), lead + (4,), rng)
    compare(theirs, ours, lambda make: (make(x), state(make)) if with_state else (make(x),))


def test_cells_over_a_sequence_match_the_layer():
    """An LSTMCell stepped over time is the LSTM layer with the same weights."""
    layer = ft.nn.LSTM(3, 4).double()
    cell = ft.nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
    x = ft.randn(5, 2, 3, dtype=ft.float64)
    out, (h, c) = layer(x)
    state = None
    for t in range(5):
        state = cell(x[t], state)
        np.testing.assert_allclose(state[0].detach().numpy(), out[t].detach().numpy(), **TOL)
    np.testing.assert_allclose(state[1].detach().numpy(), c[0].detach().numpy(), **TOL)


def test_float32_matches_pytorch():
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True)
    ours = ft.nn.LSTM(3, 4, num_layers=2, batch_first=True)
    ours.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    x = np.random.RandomState(0).randn(2, 5, 3).astype(np.float32)
    (a, (h1, _)), (b, (h2, _)) = theirs(torch.tensor(x)), ours(ft.tensor(x))
    assert b.dtype == ft.float32
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h2.detach().numpy(), h1.detach().numpy(), rtol=1e-5, atol=1e-6)


# -- construction, parameters, init ------------------------------------------------------------

def test_parameter_names_shapes_and_all_weights_match_pytorch():
    for cls, kwargs in [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                        ("GRU", dict(num_layers=3)), ("RNN", dict(bias=False,
                                                                  bidirectional=True))]:
        theirs = getattr(torch.nn, cls)(3, 4, **kwargs)
        ours = getattr(ft.nn, cls)(3, 4, **kwargs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        assert [[tuple(p.shape) for p in ws] for ws in ours.all_weights] == \
            [[tuple(p.shape) for p in ws] for ws in theirs.all_weights]
        assert repr(ours) == repr(theirs)
        assert ours.flatten_parameters() is None
    for cls, kwargs in [("RNNCell", dict(nonlinearity="relu", bias=False)),
                        ("LSTMCell", {}), ("GRUCell", {})]:
        assert repr(getattr(ft.nn, cls)(3, 4, **kwargs)) == \
            repr(getattr(torch.nn, cls)(3, 4, **kwargs))


def test_init_is_uniform_in_one_over_sqrt_hidden():
    ft.manual_seed(0)
    m = ft.nn.GRU(8, 16, num_layers=2)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    bound = 1 / np.sqrt(16)
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound
    assert abs(values.mean()) < 0.02


def errors(fn):
    messages = []
    for lib in (torch, ft):
        with pytest.raises(Exception) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn(lib)
        messages.append((type(info.value).__name__, str(info.value)))
    assert messages[1] == messages[0]


@pytest.mark.parametrize("build", [
    lambda T: T.nn.LSTM(3, 4)(T.randn(2, 3, 4, 5)),
    lambda T: T.nn.GRU(3, 4)(T.randn(2, 3, 4, 5)),
    lambda T: T.nn.RNN(3, 4)(T.randn(2, 3, 4, 5)),
    lambda T: T.nn.RNN(3, 4)(T.randn(2, 3, 5)),
    lambda T: T.nn.RNN(3, 4)(T.randn(2, 3, 3), T.randn(1, 2, 4)),
    lambda T: T.nn.RNN(3, 4)(T.randn(2, 3, 3), T.randn(2, 4)),
    lambda T: T.nn.RNN(3, 4)(T.randn(2, 3), T.randn(1, 1, 4)),
    lambda T: T.nn.LSTM(3, 4)(T.randn(2, 3, 3), (T.randn(1, 3, 4), T.randn(1, 2, 4))),
    lambda T: T.nn.LSTM(3, 4, proj_size=2)(T.randn(2, 3, 3), (T.randn(1, 3, 4),
                                                               T.randn(1, 3, 4))),
    lambda T: T.nn.LSTM(3, 4)(T.randn(2, 3, 3), (T.randn(3, 4), T.randn(1, 2, 4))),
    lambda T: T.nn.LSTM(3, 4)(T.randn(3, 3), (T.randn(3, 1, 4), T.randn(1, 2, 4))),
    lambda T: T.nn.LSTM(3, 4)(T.randn(2, 3, 3).double()),
    lambda T: T.nn.RNN(3, 4, proj_size=2),
    lambda T: T.nn.GRU(3, 4, proj_size=2),
    lambda T: T.nn.LSTM(3, 4, proj_size=4),
    lambda T: T.nn.LSTM(3, 4, proj_size=-1),
    lambda T: T.nn.LSTM(3, 0),
    lambda T: T.nn.LSTM(3, 4.0),
    lambda T: T.nn.LSTM(3, 4, num_layers=0),
    lambda T: T.nn.LSTM(3, 4, dropout=2),
    lambda T: T.nn.LSTM(3, 4, dropout=True),
    lambda T: T.nn.RNN(3, 4, nonlinearity="x"),
    lambda T: T.nn.RNNCell(3, 4)(T.randn(2, 3, 3)),
    lambda T: T.nn.RNNCell(3, 4)(T.randn(2, 3), T.randn(2, 3, 3)),
    lambda T: T.nn.RNNCell(3, 4)(T.randn(2, 5)),
    lambda T: T.nn.RNNCell(3, 4)(T.randn(2, 3), T.randn(3, 4)),
    lambda T: T.nn.RNNCell(3, 4)(T.randn(2, 3), T.randn(2, 5)),
    lambda T: T.nn.LSTMCell(3, 4)(T.randn(2, 3), (T.randn(2, 4), T.randn(2, 5))),
    lambda T: T.nn.LSTMCell(3, 4)(T.randn(2, 3), (T.randn(2, 4, 1), T.randn(2, 5))),
    lambda T: T.nn.GRUCell(3, 4)(T.randn(2, 3, 3)),
    lambda T: T.nn.LSTMCell(3, 4)(T.randn(2, 3, 3)),
    lambda T: T.nn.utils.rnn.pad_sequence([T.randn(2)], padding_side="mid"),
    lambda T: T.nn.utils.rnn.pad_sequence([]),
    lambda T: T.nn.utils.rnn.pad_sequence([T.randn(2, 3), T.randn(3, 4)]),
    lambda T: T.nn.utils.rnn.pad_sequence([T.randn(2, 3, 1), T.randn(3, 3, 2)]),
    lambda T: T.nn.utils.rnn.pack_sequence([]),
    lambda T: T.nn.utils.rnn.pack_padded_sequence(T.randn(3, 2), [1, 2]),
    lambda T: T.nn.utils.rnn.pack_padded_sequence(T.randn(3, 2), [2, 0]),
    lambda T: T.nn.utils.rnn.pack_padded_sequence(T.randn(3, 2), [2, 2, 1]),
    lambda T: T.nn.utils.rnn.pack_padded_sequence(T.randn(3, 2), T.tensor([[3, 2]])),
    lambda T: T.nn.utils.rnn.pad_packed_sequence(
        T.nn.utils.rnn.pack_sequence([T.randn(3), T.randn(2)]), total_length=2),
])
def test_errors_match_pytorch(build):
    errors(build)


def test_unknown_cell_nonlinearity_raises_at_call_as_pytorch():
    def run(T):
        cell = T.nn.RNNCell(3, 4)
        cell.nonlinearity = "x"
        cell(T.randn(2, 3))
    errors(run)


def test_dropout_with_one_layer_warns_as_pytorch():
    with pytest.warns(UserWarning, match="dropout option adds dropout after all but last "
                                         "recurrent layer"):
        ft.nn.LSTM(3, 4, dropout=0.5)


def test_a_length_past_the_padding_is_an_error_not_garbage():
    with pytest.raises(RuntimeError, match="greater than the padded input's 3 steps"):
        ft.nn.utils.rnn.pack_padded_sequence(ft.randn(3, 2), [4, 2])


# -- torch.nn.utils.rnn ------------------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_pytorch(batch_first, padding_side):
    rng = np.random.RandomState(10)
    seqs = [rng.randn(n, 2) for n in (3, 1, 4)]
    proj = rng.randn(*((3, 4, 2) if batch_first else (4, 3, 2)))
    grads = []
    for lib, make in ((torch, theirs_of), (ft, ours_of)):
        ts = [make(s) for s in seqs]
        out = lib.nn.utils.rnn.pad_sequence(ts, batch_first=batch_first, padding_value=-2.5,
                                            padding_side=padding_side)
        (out * lib.tensor(proj)).sum().backward()
        grads.append((out.detach().numpy(), [t.grad.numpy() for t in ts]))
    np.testing.assert_array_equal(grads[1][0], grads[0][0])
    for a, b in zip(grads[0][1], grads[1][1]):
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 4, 2, 1]),
                                                    (False, [2, 4, 1, 3])])
@pytest.mark.parametrize("total_length", [None, 6])
def test_pack_and_pad_round_trip_as_pytorch(batch_first, enforce_sorted, lengths,
                                            total_length):
    rng = np.random.RandomState(11)
    x = rng.randn(*((4, 4, 2) if batch_first else (4, 4, 2)))
    results = []
    for lib, make in ((torch, theirs_of), (ft, ours_of)):
        R = lib.nn.utils.rnn
        xt = make(x)
        packed = R.pack_padded_sequence(xt, lib.tensor(lengths), batch_first=batch_first,
                                        enforce_sorted=enforce_sorted)
        padded, lens = R.pad_packed_sequence(packed, batch_first=batch_first,
                                             padding_value=7.0, total_length=total_length)
        (padded * lib.tensor(np.arange(padded.numel()).reshape(tuple(padded.shape)) * 1.0)
         ).sum().backward()
        idx = [None if i is None else i.tolist() for i in packed[1:]]
        results.append((packed.data.detach().numpy(), idx, padded.detach().numpy(),
                        lens.tolist(), xt.grad.numpy(), str(packed.batch_sizes.dtype)))
    (d1, i1, p1, l1, g1, t1), (d2, i2, p2, l2, g2, t2) = results
    np.testing.assert_array_equal(d2, d1)
    np.testing.assert_array_equal(p2, p1)
    np.testing.assert_array_equal(g2, g1)
    assert (i2, l2, t2) == (i1, l1, t1)


def test_pad_sequence_takes_the_first_sequences_dtype_as_pytorch():
    for lib in (torch, ft):
        out = lib.nn.utils.rnn.pad_sequence([lib.randn(2, 3), lib.randn(3, 3).double()])
        assert str(out.dtype) == "torch.float32"
        stretched = lib.nn.utils.rnn.pad_sequence([lib.zeros(2, 3, 2), lib.ones(3, 3, 1)])
        assert tuple(stretched.shape) == (3, 2, 3, 2) and float(stretched.sum()) == 18.0


def test_pack_sequence_unpack_and_unpad_match_pytorch():
    rng = np.random.RandomState(12)
    seqs = [rng.randn(n, 3) for n in (2, 5, 3)]
    out = []
    for lib in (torch, ft):
        R = lib.nn.utils.rnn
        packed = R.pack_sequence([lib.tensor(s) for s in seqs], enforce_sorted=False)
        back = R.unpack_sequence(packed)
        padded = R.pad_sequence([lib.tensor(s) for s in seqs])
        cut = R.unpad_sequence(padded, lib.tensor([2, 5, 3]))
        out.append((packed.data.numpy(), packed.batch_sizes.tolist(),
                    [b.numpy() for b in back], [c.numpy() for c in cut]))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    assert out[1][1] == out[0][1]
    for a, b in zip(out[0][2] + out[0][3], out[1][2] + out[1][3]):
        np.testing.assert_array_equal(b, a)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        ft.nn.utils.rnn.pack_sequence([ft.tensor(s) for s in seqs])


def test_packed_sequence_is_a_tuple_with_pytorchs_fields_and_methods():
    R = ft.nn.utils.rnn
    packed = R.pack_sequence([ft.randn(3, 2), ft.randn(1, 2)])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert batch_sizes.tolist() == [2, 1, 1] and sorted_indices is None
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert packed.double().data.dtype == ft.float64 and packed.is_cuda is False
    assert packed.to(ft.float32) is packed
    made = R.PackedSequence(ft.randn(3), ft.tensor([2, 1]), ft.tensor([1, 0]))
    assert made.unsorted_indices.tolist() == [1, 0]
    assert R.invert_permutation(ft.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        R.PackedSequence(ft.randn(3), ft.tensor([2, 1], device="meta"))


# -- the example -------------------------------------------------------------------------------

def test_the_lstm_tagger_example_learns_and_matches_pytorch():
    path = Path(__file__).resolve().parents[2] / "examples" / "lstm_sequence_tagger.py"
    spec = importlib.util.spec_from_file_location("example_lstm_sequence_tagger", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    ft.manual_seed(0)
    ours = example.train(ft, steps=25)
    losses = ours["losses"]
    assert np.mean(losses[-5:]) < 0.2 * np.mean(losses[:3])
    assert ours["accuracy"] >= 0.95
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        theirs = example.train(torch, steps=25, state=ours["initial_state"])
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_allclose(losses, theirs["losses"], rtol=2e-3, atol=2e-4)
    assert abs(ours["accuracy"] - theirs["accuracy"]) <= 0.02
