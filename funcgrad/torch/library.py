"""torch.library for funcgrad.torch: custom operators with a kernel per device and an
autograd formula, with PyTorch 2.x's ``custom_op`` API::

    @torch.library.custom_op("mylib::numpy_sin", mutates_args=())
    def numpy_sin(x: Tensor) -> Tensor:            # the kernel for every device...
        return torch.from_numpy(np.sin(x.numpy()))

    @numpy_sin.register_kernel("cuda")             # ...or one kernel per device
    def _(x): ...

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    numpy_sin.register_fake(lambda x: torch.empty_like(x))   # shapes and dtypes only
    torch.ops.mylib.numpy_sin(x)                   # the op by name

Each custom op is one funcgrad primitive, declared when ``custom_op`` runs and named as the
op ("mylib::numpy_sin", in `funcgrad.core.registry()`):

- its implementations (`Primitive.def_impl`): "cpu" runs the op's CPU kernel on tensors
  holding the numpy arrays, "gpu" the CUDA kernel on cupy ones; a device without a kernel
  raises PyTorch's "Could not run ... with arguments from the ... backend";
- its VJP rule runs ``setup_context`` and ``backward`` on tensors holding the rule's arrays,
  so the backward is itself traced by whatever is active: double backward, `torch.func`,
  funcgrad's transforms, and forward mode (jvp, jacfwd), which funcgrad derives from the VJP;
- the facade records a call as one node, ``GeneratedBackwardFor_mylib_numpy_sin_default
  Backward`` as PyTorch names it, so it shows in ``grad_fn``, `funcgrad.viz.make_dot` and
  ``gradcheck``. Functional code calls the op on funcgrad Arrays with ``numpy_sin.funcgrad``.

Not supported: ops that mutate their inputs (``mutates_args`` other than ``()``: a clear
NotImplementedError; the facade's tensor storage is being redesigned), explicit
``schema=`` strings (the schema is inferred from the type hints), ``torch.compile``, and
FakeTensor. On meta tensors an op runs its ``register_fake`` function (without one it
refuses, as PyTorch's); `opcheck` checks the fake's shapes, dtypes and devices against the
kernels'.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array, as_array, to_raw
from funcgrad._results import wrap_raw
from funcgrad.core import Primitive, is_inexact
from funcgrad.meta import def_meta_impl
from funcgrad.torch._runtime import dtypes as D
from funcgrad.torch._dispatch import PrimCall, apply
from funcgrad.torch._library_schema import Schema, Slot, infer_schema
from funcgrad.torch._tensor import Tensor, make
from funcgrad.torch._runtime import grad_mode
from funcgrad.torch.autograd.function import FunctionCtx
from funcgrad.torch.amp import autocast_mode
from funcgrad.torch._library_check import run_test

__all__ = ["custom_op", "CustomOpDef", "register_kernel", "register_autograd",
           "register_fake", "opcheck", "infer_schema", "ops", "OpCheckError"]

_DEVICES = {"cpu": "cpu", "cuda": "gpu"}  # PyTorch device type -> funcgrad backend
_OPS: dict = {}  # namespace -> {op name -> CustomOpDef}


class _Ctx(FunctionCtx):
    """``ctx`` of a custom op's ``setup_context`` and ``backward``."""

    def __init__(self, needs_input_grad: tuple):
        self.needs_input_grad = needs_input_grad
        self._to_save: tuple = ()

    @property
    def saved_tensors(self) -> tuple:
        return tuple(self._to_save)


class CustomOpDef:
    """A custom op made by `custom_op`: call it like the function it was made from."""

    def __init__(self, namespace: str, name: str, fn: Callable, schema: Schema,
                 device_types: Sequence[str] | None):
        self._namespace, self._name = namespace, name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._schema = schema
        self._kernels: dict = {}
        self._backward: Callable | None = None
        self._setup_context: Callable | None = None
        self._fake: Callable | None = None
        self._multi = schema.returns != "single"
        self._node_name = f"GeneratedBackwardFor_{namespace}_{name}_defaultBackward"
        prim = Primitive(self._qualname, None, None, ("args",),
                         multiple_results=self._multi, replace=True,
                         doc=fn.__doc__ or f"the custom op {self._qualname}")
        for device, backend in _DEVICES.items():
            prim.def_impl(backend, self._backend_impl(device))
        def_meta_impl(prim, self._meta_impl)
        prim.defvjp_all(self._vjp_rule())
        prim.defbatch(self._fallback_batch_rule)
        self.primitive = prim
        self.register_kernel(list(_DEVICES) if device_types is None else device_types, fn)
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    @property
    def _opoverload(self) -> "OpOverload":
        return OpOverload(self)

    # -- registration ----------------------------------------------------------------------
    def register_kernel(self, device_types: str | Sequence[str],
                        fn: Callable | None = None) -> Callable:
        """The kernel ``fn`` for ``device_types`` ("cpu", "cuda"); a decorator without
        ``fn``. A kernel takes and returns tensors (on the device it is for)."""
        types = [device_types] if isinstance(device_types, str) else list(device_types)
        for t in types:
            kind = D.device(t).type  # PyTorch's error for an unknown device type
            if kind not in _DEVICES:
                raise ValueError(f"register_kernel: funcgrad.torch has no {kind!r} device; "
                                 "kernels are for 'cpu' (numpy) and 'cuda' (cupy)")

        def register(kernel: Callable) -> Callable:
            for t in types:
                self._kernels[D.device(t).type] = kernel
            return kernel
        return register if fn is None else register(fn)

    def register_autograd(self, backward: Callable, /, *,
                          setup_context: Callable | None = None) -> None:
        """``backward(ctx, *grads)`` returns one gradient per input of the op (None for
        non-tensor inputs and inputs without gradient, a list for a list of tensors);
        ``setup_context(ctx, inputs, output)`` saves what it needs on ``ctx``."""
        if not callable(backward):
            raise TypeError(f"register_autograd: expected backward to be callable, got "
                            f"{type(backward).__name__}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError(f"register_autograd: expected setup_context to be callable, got "
                            f"{type(setup_context).__name__}")
        self._backward, self._setup_context = backward, setup_context

    def register_fake(self, fn: Callable, /) -> Callable:
        """The op's shape function: outputs of the right shape, dtype and device (their
        values are never read). `opcheck` checks it against the kernels."""
        self._fake = fn
        return fn

    def register_autocast(self, device_type: str, cast_inputs: Any) -> None:
        """Under ``autocast(device_type)``, cast the op's floating tensor inputs to
        ``cast_inputs`` (and run the op outside autocast)."""
        autocast_mode.register_custom_op(self, D.device(device_type).type,
                                         D.to_torch_dtype(cast_inputs))

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = self._schema.bind(self._qualname, args, kwargs)
        tensors, static = self._schema.flatten(values)
        if self._multi:
            out = apply(self._node_name, lambda *a: self.primitive.bind(*a, args=static),
                        tensors, multi=True)
            return list(out) if self._schema.returns == "list" else out
        return apply(self._node_name, PrimCall(self.primitive, {"args": static}), tensors)

    def funcgrad(self, *args: Any, **kwargs: Any) -> Any:
        """The op on funcgrad Arrays (numpy or cupy arrays, nested lists) where it takes
        tensors: the functional form, differentiable by `funcgrad.grad` and friends."""
        def as_tensor(x: Any) -> Any:
            return make(as_array(x)) if isinstance(x, (Array, np.ndarray)) else x
        args = tuple(_map_lists(as_tensor, a) for a in args)
        kwargs = {k: _map_lists(as_tensor, v) for k, v in kwargs.items()}
        values = self._schema.bind(self._qualname, args, kwargs)
        tensors, static = self._schema.flatten(values)
        return self.primitive.bind(*[t._data for t in tensors], args=static)

    # -- the primitive's implementation and VJP rule ----------------------------------------
    def _backend_impl(self, device: str) -> Callable:
        def impl(*raws: Any, args: tuple) -> Any:
            kernel = self._kernels.get(device)
            if kernel is None:
                raise NotImplementedError(
                    f"Could not run '{self._qualname}' with arguments from the "
                    f"'{device.upper()}' backend. '{self._qualname}' is only available for "
                    f"these backends: {[d.upper() for d in self._kernels]}. Register a "
                    f"kernel with {self._name}.register_kernel({device!r}), or move the "
                    "inputs to a device that has one.")
            tensors = [make(wrap_raw(r)) for r in raws]
            with grad_mode.no_grad():  # a kernel runs below autograd, as in PyTorch
                out = self._schema.call(kernel, self._schema.unflatten(args, tensors))
            return self._raw_outputs(out, tensors)
        impl.__name__ = f"{self._name}_{device}"
        return impl

    def _meta_impl(self, *metas: Any, args: tuple) -> Any:
        """On meta tensors the op runs its fake (`register_fake`), as PyTorch's does; an op
        without one refuses with PyTorch's error."""
        if self._fake is None:
            raise RuntimeError(
                f"There was no fake impl registered for {self!r}. This is necessary for "
                "torch.compile/export/fx tracing to work. Please use "
                f"`{self._name}.register_fake` to add an fake impl.")
        tensors = [make(m) for m in metas]
        with grad_mode.no_grad():
            out = self._schema.call(self._fake, self._schema.unflatten(args, tensors))
        outs = list(out) if self._multi and isinstance(out, (tuple, list)) else [out]
        arrays = [o._a for o in outs]
        return arrays if self._multi else arrays[0]

    def _raw_outputs(self, out: Any, inputs: list) -> Any:
        """The backend arrays of a kernel's results, checked against the schema."""
        outs = list(out) if self._multi and isinstance(out, (tuple, list)) else [out]
        if self._schema.returns == "tuple" and len(outs) != len(self._schema.return_types):
            raise RuntimeError(f"{self._qualname}: the kernel returned {len(outs)} values, "
                               f"but the op's schema returns {len(self._schema.return_types)}"
                               f" ({self._schema.text(self._qualname)})")
        raws = []
        for o in outs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{self._qualname}: the kernel must return "
                                   f"{'tensors' if self._multi else 'a Tensor'}, got "
                                   f"{type(o).__name__}")
            if any(o._data is t._data for t in inputs):
                raise RuntimeError(_ALIAS_ERROR.format(self._qualname))
            raws.append(to_raw(o._data))
        return tuple(raws) if self._multi else raws[0]

    def _fallback_batch_rule(self, values: Sequence, dims: Sequence, **params: Any) -> tuple:
        """PyTorch's vmap fallback for an op without a batching rule: the op once per
        example, the results stacked (with PyTorch's performance warning)."""
        warnings.warn("There is a performance drop because we have not yet implemented the "
                      f"batching rule for {self._qualname}. Please file us an issue on "
                      "GitHub so that we can prioritize its implementation.", UserWarning,
                      stacklevel=2)
        size = next(a.shape[d] for a, d in zip(values, dims) if d is not None)
        results = []
        for b in range(size):
            example = [a if d is None else fnp.take(a, b, axis=d) for a, d in zip(values, dims)]
            results.append(self.primitive.bind(*example, **params))
        if self._multi:
            return tuple(fnp.stack(list(r)) for r in zip(*results)), (0,) * len(results[0])
        return fnp.stack(results), 0

    def _vjp_rule(self) -> Callable:
        def custom_op_vjp(g: Any, xs: tuple, out: Any, args: tuple) -> tuple:
            if self._backward is None:
                raise RuntimeError(f"Trying to backward through {self._namespace}."
                                   f"{self._name}.default but no autograd formula was "
                                   "registered. Please use register_autograd to add one.")
            flip = any(x.dtype.kind == "c" for x in xs)  # PyTorch's grads are conjugates
            values = self._schema.unflatten(args, [make(x) for x in xs])
            params = self._schema.params
            inputs = tuple(v for p, v in zip(params, values) if not p.keyword_only)
            keyword_only = {p.name: v for p, v in zip(params, values) if p.keyword_only}
            outs = [make(o) for o in out] if self._multi else make(out)
            output = outs if self._schema.returns != "tuple" else tuple(outs)
            ctx = _Ctx(tuple(_needs_grad(v) for v in inputs))
            if self._setup_context is not None:  # called as PyTorch calls it, by keyword
                extra = {"keyword_only_inputs": keyword_only} if keyword_only else {}
                self._setup_context(ctx=ctx, inputs=inputs, output=output, **extra)
            gs = list(g) if self._multi else [g]
            grads = self._backward(ctx, *[make(_conj(c) if flip else c) for c in gs])
            cts = self._input_cotangents(grads, args, xs)
            return tuple(_conj(c) if flip and c is not None else c for c in cts)
        return custom_op_vjp

    def _input_cotangents(self, grads: Any, args: tuple, xs: tuple) -> list:
        """The array cotangent of each tensor input from what ``backward`` returned: one
        value per positional argument of the op (a list for a list of tensors), checked
        as PyTorch checks it (its count includes one slot for the keyword-only args)."""
        params = [(p, a) for p, a in zip(self._schema.params, args) if not p.keyword_only]
        grads = [*grads, None] if isinstance(grads, tuple) else [grads, None]
        expected = len(params) + 1
        if len(grads) > expected and all(g is None for g in grads[expected:]):
            grads = grads[:expected]
        if len(grads) != expected:
            if any(p.type in ("Tensor[]", "Tensor?[]") for p, _ in params):
                raise RuntimeError(
                    "Expected the return from backward to be of the same structure as the "
                    f"inputs. Got: {len(grads) - 1} value(s) (return from backward), "
                    f"{len(params)} input(s) ({', '.join(p.name for p, _ in params)})")
            raise RuntimeError(f"function {self._node_name} returned an incorrect number of "
                               f"gradients (expected {expected}, got {len(grads)})")
        cts: list = [None] * len(xs)
        for position, ((p, static), grad) in enumerate(zip(params + [(None, None)], grads)):
            if p is not None and p.type in ("Tensor[]", "Tensor?[]"):
                if grad is not None and len(grad) != len(static):
                    raise RuntimeError(f"backward of {self._qualname}: argument {p.name!r} "
                                       f"has {len(static)} tensors but its gradient has "
                                       f"{len(grad)}")
                pairs = [] if grad is None else list(zip(static, grad))
            else:
                pairs = [(static, grad)]
            for slot, gi in pairs:
                if gi is None:
                    continue
                if not isinstance(slot, Slot):
                    raise RuntimeError(f"function {self._node_name} returned a gradient "
                                       f"different than None at position {position + 1}, "
                                       "but the corresponding forward input was not a "
                                       "Variable")
                cts[slot.index] = self._checked_grad(gi, xs[slot.index], slot.index)
        return cts

    def _checked_grad(self, g: Any, x: Any, index: int) -> Any:
        if not isinstance(g, Tensor):
            raise TypeError(f"backward of {self._qualname} returned a {type(g).__name__} "
                            f"where a Tensor (or None) was expected, at index {index}")
        shape, want = tuple(g.shape), tuple(x.shape)
        try:
            compatible = np.broadcast_shapes(shape, want) == shape
        except ValueError:
            compatible = False
        if not compatible:
            raise RuntimeError(f"Function {self._node_name} returned an invalid gradient at "
                               f"index {index} - got {list(shape)} but expected shape "
                               f"compatible with {list(want)}")
        return g._data


_ALIAS_ERROR = (
    "{0} (with implementation in funcgrad.torch.library): The output of this custom "
    "operator (1) must not also be an input to this custom operator and (2) may not alias "
    "any inputs to this custom operator or other returns. The most common way to trigger "
    "this error is if we have y = custom_op(x) and y and x are the same Tensor. Please "
    "instead return a clone of the offending output tensor(s) (e.g. return x.clone()) or "
    "refactor the custom operator to not return y.")


def _conj(x: Any) -> Any:
    return fnp.conj(x) if x.dtype.kind == "c" else x


def _needs_grad(v: Any) -> Any:
    if isinstance(v, Tensor):
        return is_inexact(v._data.dtype)
    if isinstance(v, list) and v and all(isinstance(t, Tensor) or t is None for t in v):
        return any(t is not None and is_inexact(t._data.dtype) for t in v)
    return False


def _map_lists(fn: Callable, value: Any) -> Any:
    return [fn(v) for v in value] if isinstance(value, (list, tuple)) else fn(value)


def _split_name(qualname: str) -> tuple[str, str]:
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace.isidentifier() or not name.isidentifier():
        raise ValueError(f"custom_op: expected a name of the form 'namespace::op_name' "
                         f"(both Python identifiers, e.g. 'mylib::numpy_sin'), got "
                         f"{qualname!r}")
    return namespace, name


def custom_op(name: str, fn: Callable | None = None, /, *, mutates_args: Any,
              device_types: str | Sequence[str] | None = None,
              schema: str | None = None) -> Any:
    """Make ``fn`` (type-annotated; decorator form without ``fn``) the custom op
    ``name`` ("namespace::op_name"). ``mutates_args`` must be ``()``: funcgrad's custom
    ops return new tensors. ``device_types`` limits ``fn`` to those devices (other kernels
    can be added with ``register_kernel``)."""
    namespace, op_name = _split_name(name)
    if schema is not None:
        raise NotImplementedError("custom_op: explicit schema strings are not supported; "
                                  "funcgrad infers the schema from the type hints")

    def make_op(f: Callable) -> CustomOpDef:
        op_schema = Schema(f, mutates_args)
        if mutates_args == "unknown" or tuple(mutates_args):
            raise NotImplementedError(
                f"custom_op {name!r}: mutating custom ops (mutates_args={mutates_args!r}) "
                "are not supported yet (funcgrad.torch's tensor storage is being "
                "redesigned); write the op to return new tensors, with mutates_args=()")
        types = [device_types] if isinstance(device_types, str) else device_types
        op = CustomOpDef(namespace, op_name, f, op_schema, types)
        _OPS.setdefault(namespace, {})[op_name] = op
        return op
    return make_op if fn is None else make_op(fn)


def _lookup(op: str | CustomOpDef) -> CustomOpDef:
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, OpOverload):
        return op._op
    namespace, name = _split_name(op)
    found = _OPS.get(namespace, {}).get(name)
    if found is None:
        raise ValueError(f"{op!r} is not a custom op defined with "
                         "funcgrad.torch.library.custom_op")
    return found


def register_kernel(op: str | CustomOpDef, device_types: str | Sequence[str],
                    func: Callable | None = None, /) -> Callable:
    """``op.register_kernel(device_types, func)`` for an op given by name."""
    return _lookup(op).register_kernel(device_types, func)


def register_autograd(op: str | CustomOpDef, backward: Callable, /, *,
                      setup_context: Callable | None = None) -> None:
    """``op.register_autograd(backward, setup_context=...)`` for an op given by name."""
    _lookup(op).register_autograd(backward, setup_context=setup_context)


def register_fake(op: str | CustomOpDef, func: Callable | None = None, /) -> Callable:
    """``op.register_fake(func)`` for an op given by name (a decorator without func)."""
    target = _lookup(op)
    return target.register_fake if func is None else target.register_fake(func)


# -- torch.ops ---------------------------------------------------------------------------

class OpOverload:
    """``torch.ops.mylib.op.default``."""

    def __init__(self, op: CustomOpDef):
        self._op = op

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._op(*args, **kwargs)

    @property
    def _schema(self) -> str:
        return self._op._schema.text(self._op._qualname, cpp=True)

    def name(self) -> str:
        return self._op._qualname

    def __str__(self) -> str:
        return f"{self._op._namespace}.{self._op._name}.default"

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._op._namespace}.{self._op._name}', overload='default')>"


class OpOverloadPacket(OpOverload):
    """``torch.ops.mylib.op``: callable, with its one overload ``.default``."""

    @property
    def default(self) -> OpOverload:
        return OpOverload(self._op)

    def overloads(self) -> list:
        return ["default"]

    def __str__(self) -> str:
        return f"{self._op._namespace}.{self._op._name}"

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._op._namespace}.{self._op._name}')>"


class _OpNamespace:
    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, name: str) -> OpOverloadPacket:
        if name.startswith("__"):
            raise AttributeError(name)
        op = _OPS.get(self._name, {}).get(name)
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._name}' object has no attribute "
                                 f"'{name}'")
        return OpOverloadPacket(op)


class _Ops:
    """``torch.ops``: ``torch.ops.<namespace>.<op>`` finds a custom op by name."""

    def __getattr__(self, namespace: str) -> _OpNamespace:
        if namespace.startswith("__"):
            raise AttributeError(namespace)
        return _OpNamespace(namespace)


ops = _Ops()


# -- opcheck -----------------------------------------------------------------------------

class OpCheckError(Exception):
    """A test of `opcheck` failed."""


_TESTS = ("test_schema", "test_autograd_registration", "test_faketensor",
          "test_aot_dispatch_dynamic")


def opcheck(op: Any, args: tuple, kwargs: dict | None = None, *,
            test_utils: str | Sequence[str] = _TESTS, raise_exception: bool = True,
            atol: float | None = None, rtol: float | None = None) -> dict:
    """torch.library.opcheck: check a custom op on one set of inputs. ``test_schema``:
    the inputs are unchanged and no output aliases one; ``test_autograd_registration``:
    an op called on tensors that require grad has an autograd formula;
    ``test_faketensor``: the fake's outputs have the kernel's shapes, dtypes and devices;
    ``test_aot_dispatch_dynamic``: traced by funcgrad (`torch.func.vjp`, funcgrad's
    stand-in for AOT dispatch) the op gives the eager values and the eager gradients."""
    target = _lookup(op._op if isinstance(op, OpOverload) else op)
    tests = [test_utils] if isinstance(test_utils, str) else list(test_utils)
    unknown = [t for t in tests if t not in _TESTS]
    if unknown:
        raise ValueError(f"opcheck: unknown test(s) {unknown}; the tests are {list(_TESTS)}")
    results = {}
    for name in tests:
        try:
            run_test(name, target, tuple(args), dict(kwargs or {}), atol, rtol)
            results[name] = "SUCCESS"
        except Exception as e:  # noqa: BLE001 - reported per test, as PyTorch does
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {e}") from e
            results[name] = e
    return results

