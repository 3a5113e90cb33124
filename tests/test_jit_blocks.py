"""Elementwise blocks of compiled programs (transforms/compile_blocks.py): runs of ufunc
calls on large arrays of one shape run chunk by chunk. The results must be bit-identical
to eager (the same calls on the same elements), the inputs never written, and the
intermediate values must not be materialised as full arrays.

Most tests shrink the blocks (`tiny_blocks`: every shape blocked, chunks of 3 elements,
so that the samplers' small arrays run in several chunks with a ragged tail)."""
import contextlib
import importlib.util
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import grad, jit, value_and_grad
from funcgrad.primitives import registry
from funcgrad.transforms import compile_blocks


def _registry_tests():
    """tests/test_jit_registry.py as a module, for its comparison helpers (tests/ is not
    a package)."""
    path = Path(__file__).with_name("test_jit_registry.py")
    spec = importlib.util.spec_from_file_location("_jit_registry_helpers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_helpers = _registry_tests()
_canonical, _inexact = _helpers._canonical, _helpers._inexact
_pullback, assert_identical = _helpers._pullback, _helpers.assert_identical

ELEMENTWISE = sorted(n for n, p in registry().items()
                     if p.sample is not None and isinstance(p.impl, np.ufunc))
FEWER = settings(max_examples=max(2, settings.default.max_examples // 4))


@contextlib.contextmanager
def tiny():
    """Every shape blocked, in chunks of 3 elements."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in [("BLOCK_MIN_SIZE", 1), ("BLOCK_MIN_BYTES", 0), ("CHUNK_ALIGN", 1),
                            ("CHUNK_MIN", 3), ("CHUNK_MAX", 3)]:
            patch.setattr(compile_blocks, name, value)
        yield


@pytest.fixture
def tiny_blocks():
    with tiny():
        yield


def source(fun, *args):
    return jit(fun).lower(*args).compile().source


def chain(x, ws, bs):
    h = x
    for w, b in zip(ws, bs):
        h = fnp.tanh(h * w + b)
    return fnp.sum(h)


def chain_inputs(n, depth, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (fnp.asarray(rng.standard_normal(n).astype(dtype)),
            [fnp.asarray((rng.standard_normal(n) * 0.5).astype(dtype)) for _ in range(depth)],
            [fnp.asarray((rng.standard_normal(n) * 0.1).astype(dtype)) for _ in range(depth)])


# ---------------------------------------------------------------------------------------
# registry-driven: every elementwise (ufunc) primitive, forward and pullback, in chunks
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ELEMENTWISE)
@FEWER
@given(data=st.data())
def test_blocked_primitive_and_pullback_are_bit_identical_to_eager(name, data):
    with tiny():
        _check_blocked(registry()[name], data)


def _chained(fun):
    return lambda *args: fun(*args) * 3


def _widened(args):
    """The array arguments broadcast to one shape of at least 7 elements (several chunks
    and a tail): the sampler's values, in arrays a block takes (no broadcasting)."""
    arrays = [a for a in args if isinstance(a, (np.ndarray, np.generic))]
    shape = np.broadcast_shapes(*[np.shape(a) for a in arrays])
    if math.prod(shape) < 7:
        shape = (7,) + shape
    return tuple(np.array(np.broadcast_to(a, shape)) if isinstance(a, (np.ndarray, np.generic))
                 else a for a in args)


def _check_blocked(prim, data):
    """On the sampled arguments and on them widened: the primitive (with one call after
    it), its pullback and the pullback of the chained call, jitted in tiny blocks, give
    eager's bits."""
    for case in prim.sample(prim, data.draw):
        for args in (_canonical(case.args), _widened(case.args)):
            chained = _chained(case.fun)
            funs = [("forward", chained)]
            if prim.differentiable and _inexact(case.fun(*args)):
                funs += [("pullback", _pullback(case.fun)),
                         ("chained pullback", _pullback(chained))]
            for what, fun in funs:
                eager = fun(*args)
                jitted = jit(fun)
                jitted(*args)
                assert_identical(eager, jitted(*args),
                                 f"{prim.name} {case.label} {what} on {np.shape(args[0])}")


def test_pullbacks_of_binary_ufuncs_are_blocked(tiny_blocks):
    """The registry test above runs blocks: a binary ufunc's pullback on arrays is a run
    of elementwise calls."""
    x, y = np.linspace(0.5, 2.0, 7), np.linspace(-1.0, 1.0, 7)
    text = source(_pullback(lambda a, b: fnp.sin(a) * b + a), x, y)
    assert "elementwise block" in text and "for _i in range(0, 4, 3):" in text
    assert "_j = 7" in text  # a last chunk of one element joins the one before


# ---------------------------------------------------------------------------------------
# the property blocks rely on: numpy computes an element the same wherever it falls
# ---------------------------------------------------------------------------------------

UFUNCS = sorted({p.impl for p in registry().values() if isinstance(p.impl, np.ufunc)}
                | {np.multiply, np.subtract}, key=lambda u: u.__name__)


def _operands(uf, dtype, n, rng):
    operands = []
    for k in range(uf.nin):
        a = rng.standard_normal(n + 3) * 3
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(n + 3)
        a = a.astype(dtype)
        a[::97] = [np.inf, -np.inf, np.nan, 0.0, -0.0][k % 5]
        operands.append(a[k + 1:k + 1 + n])  # misaligned views
    return operands


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_numpy_ufuncs_do_not_depend_on_position_or_aliasing(dtype):
    """Each ufunc of the registry on a whole array, and chunk by chunk (every chunk of 2
    elements or more, as blocks make them) into misaligned scratch and in place over an
    operand's copy, with special values and ragged tails, gives the same bits (on this
    machine's SIMD loops)."""
    rng = np.random.default_rng(1)
    n = 2 * 1024 + 37
    differ = []
    for uf in UFUNCS:
        operands = _operands(uf, dtype, n, rng)
        try:
            with np.errstate(all="ignore"):
                whole = uf(*operands)
        except (TypeError, ValueError):
            continue  # no loop for this dtype
        for chunk in (2, 3, 5, 1024):
            pieces = np.empty_like(whole)
            scratch = np.empty(chunk + 2, whole.dtype)[1:]
            with np.errstate(all="ignore"):
                for i in range(0, n - 1, chunk):
                    j = n if i + chunk >= n - 1 else i + chunk
                    parts = [a[i:j] for a in operands]
                    out = scratch[:j - i]
                    if parts[-1].dtype == whole.dtype:  # in place over the last operand
                        out = parts[-1] = parts[-1].copy()
                    uf(*parts, out=out)
                    pieces[i:j] = out
            if not np.array_equal(whole.view(np.uint8), pieces.view(np.uint8)):
                differ.append((uf.__name__, chunk))
    assert not differ, f"chunked ufuncs differ from whole-array calls: {differ}"


# ---------------------------------------------------------------------------------------
# programs: what is blocked, what is materialised, what is never written
# ---------------------------------------------------------------------------------------

def test_gradient_of_a_large_chain_is_one_block_without_full_intermediates():
    """jit(grad) of an 8-layer tanh chain on 40000 elements (the default sizes: 23 MB of
    arrays unblocked): forward and backward in one block, whose only full array is the
    gradient; bit-identical to eager; the inputs unchanged."""
    x, ws, bs = chain_inputs(40000, 8)
    copies = [np.array(a) for a in [x, *ws, *bs]]
    text = source(grad(chain), x, ws, bs)
    assert text.count("# elementwise block") == 1, text
    assert len(re.findall(r"v\d+ = np\.empty\(\(40000,\)", text)) == 1, text
    assert "del" in text and "return (v" in text
    g = jit(grad(chain))
    g(x, ws, bs)
    assert_identical(grad(chain)(x, ws, bs), g(x, ws, bs), "chain gradient")
    for a, c in zip([x, *ws, *bs], copies):
        assert np.array_equal(np.asarray(a), c), "an input was overwritten"


def test_chunks_fill_the_scratch_budget_and_no_more_than_the_arrays():
    """A chunk is as long as `SCRATCH_BYTES` of scratch rows allow (each ufunc call
    costs about a microsecond of dispatch, whatever its length), within one
    `CHUNK_ALIGN` step, and the rows are no longer than the block's arrays."""
    x, ws, bs = chain_inputs(40000, 8)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compile_blocks, "SCRATCH_BYTES", 1 << 20)
        text = source(grad(chain), x, ws, bs)
    rows, chunk = map(int, re.search(r"np\.empty\(\((\d+), (\d+)\), dt\d+\)", text).groups())
    assert f"in chunks of {chunk}" in text, text
    step = rows * 8 * compile_blocks.CHUNK_ALIGN
    assert (1 << 20) - step < rows * chunk * 8 <= 1 << 20, text
    text = source(grad(chain), x, ws, bs)  # the default budget: one chunk of the arrays
    assert "in chunks of 40000" in text and "np.empty((40000,)" in text, text
    assert re.search(r"np\.empty\(\(\d+, 40000\), dt\d+\)", text), text
    g = jit(grad(chain))
    g(x, ws, bs)
    assert_identical(grad(chain)(x, ws, bs), g(x, ws, bs), "chain gradient")


def test_unblocked_backward_of_a_chain_allocates_nothing():
    """Without blocks (a GPU program, or blocks off): the derivative of tanh computes in
    the dead buffer of tanh's output, so the backward pass makes no new array; the
    forward makes one per layer (``h * w``: every other value is alive)."""
    x, ws, bs = chain_inputs(5000, 3)
    lowered = jit(grad(chain)).lower(x, ws, bs)
    text = funcgrad.transforms.compile.compile_tape(lowered.tape, blocks=False).source
    calls = [line for line in text.splitlines() if re.search(r"\w+_?\d*\(", line)
             and "del " not in line and "def " not in line and "return" not in line]
    fresh = [line for line in calls if "out=" not in line]
    assert len(fresh) == 3 and all("mul" in line for line in fresh), text
    g = jit(grad(chain))
    g(x, ws, bs)
    assert_identical(grad(chain)(x, ws, bs), g(x, ws, bs), "chain gradient")


def test_small_arrays_and_small_runs_are_not_blocked():
    """Arrays below `BLOCK_MIN_SIZE` elements, and a run whose arrays take less than
    `BLOCK_MIN_BYTES` together (an SGD update of a 40000-element weight): the calls on
    whole arrays are faster there."""
    x, ws, bs = chain_inputs(1000, 3)
    assert "elementwise block" not in source(grad(chain), x, ws, bs)
    w, g = np.ones(40000), np.ones(40000)
    assert "elementwise block" not in source(lambda w, g: w - 0.1 * g, w, g)


def test_value_and_grad_keeps_the_loss_out_of_the_block(tiny_blocks):
    """The loss (a reduction) moves after the block: one block for both passes; the
    forward value it reduces escapes the block, nothing else."""
    x, ws, bs = chain_inputs(10, 3)
    text = source(value_and_grad(chain), x, ws, bs)
    assert text.count("# elementwise block") == 1, text
    assert text.index("reduce_sum") > text.index("for _i"), text
    assert len(re.findall(r"v\d+ = np\.empty\(", text)) == 2, text  # the value, the grad
    vg = jit(value_and_grad(chain))
    vg(x, ws, bs)
    assert_identical(value_and_grad(chain)(x, ws, bs), vg(x, ws, bs), "value_and_grad")


def test_mixed_dtypes_scalars_and_layouts(tiny_blocks):
    """float32 and float64 values in one block (a scratch array per dtype), Python and
    0-d operands broadcast into every chunk, a transposed (non-contiguous) 2-d input
    read through a copy, a float32 value escaping: bit-identical, inputs unchanged."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((5, 4)).astype(np.float32).T  # F-ordered view
    s = np.asarray(1.5)

    def f(a, b, s):
        c = b * 2.0 + 1.0          # float32
        d = fnp.exp(a * c) - s     # float64
        return d * 3, c * c

    copies = [np.array(a), np.array(b), np.array(s)]
    text = source(f, a, b, s)
    assert "elementwise block" in text and "reshape(-1)" in text
    jf = jit(f)
    jf(a, b, s)
    assert_identical(f(a, b, s), jf(a, b, s), "mixed block")
    for x, c in zip([a, b, s], copies):
        assert np.array_equal(x, c)


def test_donated_and_undonated_inputs(tiny_blocks):
    """A block never writes its inputs: an undonated argument keeps its values, a donated
    one is deleted as the jit contract says, and the results equal eager."""
    x, y = np.linspace(-1.0, 1.0, 8), np.linspace(0.5, 2.0, 8)

    def f(x, y):
        return fnp.sin(x) * y + x

    expected = f(x, y)
    fx, fy = fnp.asarray(x), fnp.asarray(y)
    jf = jit(f, donate_argnums=0)
    for _ in range(2):
        fx = fnp.asarray(x)
        assert_identical(expected, jf(fx, fy), "donated call")
        with pytest.raises(RuntimeError, match="donated"):
            fx + 1
        assert np.array_equal(np.asarray(fy), y)


@pytest.mark.parametrize("shape", [(8,), (2, 4)])
def test_a_donated_buffer_takes_the_blocks_result(tiny_blocks, shape):
    """A donated argument whose last use is in the block receives the block's result (an
    update in place, chunk by chunk: each chunk is read before it is written); an
    undonated one never does. A 2-d one only if it has a flat view (C-contiguous):
    a Fortran-ordered donated array gets a fresh result."""
    def step(p, g):
        return p - 0.1 * fnp.tanh(g) * p

    p = np.linspace(-1.0, 1.0, 8).reshape(shape)
    g = np.linspace(0.5, 2.0, 8).reshape(shape)
    expected = step(p, g)
    assert re.search(r"v\d+ = v0\b", source(step, p, g)) is None
    donating = jit(step, donate_argnums=0)
    assert re.search(r"v\d+ = v0\b", donating.lower(fnp.asarray(p), g).compile().source)
    for layout in ("C", "F"):
        for _ in range(2):
            arg = fnp.asarray(np.array(p, order=layout))
            assert_identical(expected, donating(arg, g), f"donated {layout} update")


def test_programs_that_put_values_on_a_device_are_not_blocked(tiny_blocks):
    """After a device_put the values may live on a GPU, where host scratch rows cannot
    hold them (and each chunk would be a kernel launch)."""
    x = np.linspace(-1.0, 1.0, 8)
    text = source(lambda x: fnp.tanh(funcgrad.device_put(x * 2.0, "cpu")) + 1.0, x)
    assert "elementwise block" not in text, text


def test_a_non_elementwise_step_between_runs(tiny_blocks):
    """A matmul whose input comes from one run and whose result feeds another: two
    blocks, the matmul between them (it cannot move past the run that reads it)."""
    rng = np.random.default_rng(3)
    a, m = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))

    def f(a, m):
        h = fnp.tanh(a * 2.0 + 1.0)
        return fnp.exp(h @ m) * h - 1.0

    text = source(f, a, m)
    assert text.count("# elementwise block") == 2, text
    jf = jit(f)
    jf(a, m)
    assert_identical(f(a, m), jf(a, m), "two blocks")


def test_control_flow_bodies_are_blocked(tiny_blocks):
    """A scan body's elementwise run is blocked inside the loop's nested function."""
    x = np.linspace(-1.0, 1.0, 7)

    def f(x):
        def body(h, _):
            h = fnp.tanh(h * 0.9 + 0.1)
            return h, h * 2.0
        return funcgrad.lax.scan(body, x, None, length=3)

    text = source(f, x)
    assert "elementwise block" in text, text
    jf = jit(f)
    jf(x)
    assert_identical(f(x), jf(x), "scan")
