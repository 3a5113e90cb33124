"""`jax.lax`'s convolutions: ``conv_general_dilated`` and the functions built on it.

Everything here normalises arguments (padding strings, dimension numbers, defaults) and
checks them with JAX's error messages, then calls the one `conv_general_dilated`
primitive (or, for patches, the `sliding_windows` gather), whose rules give every
derivative. Layouts are dimension numbers as in JAX: ``None`` (NCHW / OIHW / NCHW), a
`ConvDimensionNumbers` of axis permutations, or three strings such as
``('NHWC', 'HWIO', 'NHWC')`` whose spatial letters pair up in the order of the kernel's.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.array import Array
from funcgrad.primitives import conv as P
from funcgrad.primitives.conv import ConvDimensionNumbers

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_general_dilated_patches"]

def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list:
    """(low, high) pads for 'VALID', 'SAME' (odd excess at the end) or 'SAME_LOWER' (at
    the start): 'SAME' makes the output ``ceil(in / stride)`` long."""
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode not in ("VALID", "SAME", "SAME_LOWER"):
        raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                           f"'SAME_LOWER', got {padding}.")
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for d, w, s in zip(in_shape, window_shape, window_strides):
        total = max(0, (-(-d // s) - 1) * s + w - d)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if mode == "SAME" else (large, small))
    return pads


def _spatial_perm(spec: str, roles: str, rhs_spec: str) -> tuple:
    spatial = [i for i, c in enumerate(spec) if c not in roles]
    if spec is not rhs_spec:
        spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(roles[0]), spec.index(roles[1])) + tuple(spatial)


def _string_specs(specs: Sequence[str]) -> ConvDimensionNumbers:
    roles = ("NC", "OI", "NC")
    for i, (spec, pair) in enumerate(zip(specs, roles)):
        if not spec.count(pair[0]) == spec.count(pair[1]) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{pair[0]}' and '{pair[1]}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    lhs, rhs, out = specs
    if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(specs)}.")
    return ConvDimensionNumbers(*(_spatial_perm(s, r, rhs) for s, r in zip(specs, roles)))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, strings or permutations) as `ConvDimensionNumbers`."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                        f"{type(dimension_numbers)}.")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                        f"{len(dimension_numbers)}.")
    if all(isinstance(s, (tuple, list)) for s in dimension_numbers):  # permutations
        specs = tuple(tuple(int(a) for a in s) for s in dimension_numbers)
        for i, s in enumerate(specs):
            if sorted(s) != list(range(len(lhs_shape))):
                raise TypeError(f"convolution dimension_numbers[{i}] must be a permutation "
                                f"of range({len(lhs_shape)}), got {s}.")
        return ConvDimensionNumbers(*specs)
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers elements must be strings, got "
                        f"{tuple(map(type, dimension_numbers))}.")
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(s)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    return _string_specs(dimension_numbers)


def _positive_ints(name: str, values: Any, n: int) -> tuple:
    values = (1,) * n if values is None else tuple(values)
    if len(values) != n:
        raise ValueError(f"conv_general_dilated {name} must have {n} entries (one per "
                         f"spatial dimension), got {values}")
    out = tuple(operator.index(v) for v in values)
    if any(v < 1 for v in out):
        raise ValueError(f"conv_general_dilated {name} must be positive, got {out}")
    return out


def _explicit_padding(padding: Any) -> tuple:
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (ValueError, TypeError) as e:
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from e


def _check_groups(lhs_shape: tuple, rhs_shape: tuple, dn: ConvDimensionNumbers,
                  feature_group_count: int, batch_group_count: int) -> None:
    """JAX's shape checks of the feature and batch groups (and their error texts)."""
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}.")
    features = lhs_shape[dn.lhs_spec[1]]
    quot, rem = divmod(features, feature_group_count)
    if rem:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{features}.")
    if quot != rhs_shape[dn.rhs_spec[1]]:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {features} // {feature_group_count} != "
                         f"{rhs_shape[dn.rhs_spec[1]]}.")
    out_features = rhs_shape[dn.rhs_spec[0]]
    if out_features % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {out_features} is not a "
                         f"multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive integer, "
                         f"got {batch_group_count}.")
    batch = lhs_shape[dn.lhs_spec[0]]
    if batch_group_count > 1 and batch % batch_group_count:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide {batch}.")
    if out_features % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {out_features} is not a "
                         f"multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > "
                         f"1, got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Array:
    """General n-dimensional convolution (XLA's ConvGeneralDilated), as `jax.lax`'s.

    ``window_strides`` per spatial axis; ``padding`` 'SAME', 'SAME_LOWER', 'VALID' or
    (low, high) pairs (negative pads crop); ``lhs_dilation`` dilates the input (a
    transposed convolution), ``rhs_dilation`` the kernel (atrous); ``feature_group_count``
    splits the input features into groups with their own kernels (depthwise convolution
    when it equals the feature count); ``batch_group_count`` does the same over the batch
    (kernel gradients of grouped convolutions). ``precision`` is accepted for JAX's
    signature (numpy computes at full precision)."""
    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    if lhs.ndim != rhs.ndim:
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    if lhs.ndim < 2:
        raise ValueError("conv_general_dilated needs operands of at least 2 dimensions "
                         f"(batch and feature), got {lhs.shape} and {rhs.shape}.")
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n_sp = lhs.ndim - 2
    if len(tuple(window_strides)) != n_sp:
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {n_sp} and "
                         f"{len(tuple(window_strides))}")
    strides = _positive_ints("window_strides", window_strides, n_sp)
    if lhs_dilation is not None and isinstance(padding, str) and any(
            a != 1 for a in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution "
                         "using this op. Please either exactly specify the required padding "
                         "or use conv_transpose.")
    lhs_dil = _positive_ints("lhs_dilation", lhs_dilation, n_sp)
    rhs_dil = _positive_ints("rhs_dilation", rhs_dilation, n_sp)
    in_sp = [lhs.shape[a] for a in dn.lhs_spec[2:]]
    k_sp = [rhs.shape[a] for a in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        pads = tuple(tuple(p) for p in padtype_to_pads(
            in_sp, [P.dilate_dim(k, r) for k, r in zip(k_sp, rhs_dil)], strides, padding))
    else:
        pads = _explicit_padding(padding)
        if len(pads) != n_sp:
            raise TypeError("Wrong number of explicit pads for convolution: expected "
                            f"{n_sp}, got {len(pads)}.")
    if any(P.dilate_dim(d, a) + lo + hi < 0 for d, a, (lo, hi) in zip(in_sp, lhs_dil, pads)):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={tuple(in_sp)}")
    _check_groups(lhs.shape, rhs.shape, dn, int(feature_group_count), int(batch_group_count))
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    return P.conv_general_dilated(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dil,
        rhs_dilation=rhs_dil, dimension_numbers=dn,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), preferred_element_type=pet)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Convolution in NCHW / OIHW layout (no dilation, no groups)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """Convolution in NCHW / OIHW layout with explicit padding and dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(k: int, s: int, padding: Any) -> tuple:
    """(before, after) padding of the dilated input of a transposed convolution, from the
    padding of the forward convolution it transposes (kernel span k, stride s)."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        before, total = k - padding[0] - 1, 2 * k - 2 - padding[0] - padding[1]
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_DEFAULT_TRANSPOSE_SPECS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                            4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """Transposed convolution (the gradient of a strided convolution), as `jax.lax`'s:
    the input dilated by ``strides`` and convolved with stride 1. The default layout is
    TensorFlow's (NHWC / HWIO); ``transpose_kernel`` flips the kernel's spatial axes and
    swaps its in/out features (TensorFlow's Conv2DTranspose). String padding, and with
    ``use_consistent_padding`` explicit pairs too, name the forward convolution's padding
    (PyTorch's convention); otherwise pairs pad the dilated input directly."""
    lhs, rhs = fnp.asarray(lhs), fnp.asarray(rhs)
    if dimension_numbers is None:
        if lhs.ndim not in _DEFAULT_TRANSPOSE_SPECS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _DEFAULT_TRANSPOSE_SPECS[lhs.ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n_sp = lhs.ndim - 2
    rhs_dil = (1,) * n_sp if rhs_dilation is None else tuple(rhs_dilation)
    k_sp = [P.dilate_dim(rhs.shape[a], r) for a, r in zip(dn.rhs_spec[2:], rhs_dil)]
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_axis = [padding] * n_sp if isinstance(padding, str) else [tuple(p) for p in padding]
        pads: Any = tuple(_transpose_pads(k, s, p) for k, s, p in zip(k_sp, strides, per_axis))
    else:
        pads = padding
    if transpose_kernel:
        rhs = fnp.flip(rhs, tuple(dn.rhs_spec[2:]))
        rhs = fnp.swapaxes(rhs, dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, rhs, (1,) * n_sp, pads, tuple(strides), rhs_dil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Array:
    """The patches a `conv_general_dilated` with a kernel of ``filter_shape`` would see,
    flattened into the output's feature axis in (feature, filter spatial...) order: one
    `sliding_windows` gather (no multiplication by an identity kernel)."""
    lhs = fnp.asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    n_sp = lhs.ndim - 2
    strides = _positive_ints("window_strides", window_strides, n_sp)
    lhs_dil = _positive_ints("lhs_dilation", lhs_dilation, n_sp)
    rhs_dil = _positive_ints("rhs_dilation", rhs_dilation, n_sp)
    x = fnp.transpose(lhs, dn.lhs_spec)                      # (N, C, S...)
    # the filter's sizes fill the kernel axes other than O and I in array order
    kernel_shape = dict(zip(sorted(dn.rhs_spec[2:]), filter_shape))
    k_sp = tuple(kernel_shape[a] for a in dn.rhs_spec[2:])
    if isinstance(padding, str):
        pads = tuple(tuple(p) for p in padtype_to_pads(
            x.shape[2:], [P.dilate_dim(k, r) for k, r in zip(k_sp, rhs_dil)], strides,
            padding))
    else:
        pads = _explicit_padding(padding)
    windows = P.sliding_windows(
        x, window_dimensions=(1, 1) + k_sp, window_strides=(1, 1) + strides,
        padding=((0, 0), (0, 0)) + pads, base_dilation=(1, 1) + lhs_dil,
        window_dilation=(1, 1) + rhs_dil, fill=0.0)          # (N, C, OS..., 1, 1, K...)
    n, c = x.shape[:2]
    out_sp = windows.shape[2:2 + n_sp]
    patches = fnp.reshape(windows, (n, c) + out_sp + k_sp)
    order = (0, 1) + tuple(range(2 + n_sp, 2 + 2 * n_sp)) + tuple(range(2, 2 + n_sp))
    patches = fnp.reshape(fnp.transpose(patches, order), (n, c * math.prod(k_sp)) + out_sp)
    out = fnp.transpose(patches, tuple(int(i) for i in np.argsort(dn.out_spec)))
    return out if preferred_element_type is None else fnp.astype(out, preferred_element_type)
