"""Backend kernels: the layout and data tricks behind some primitives' implementations.

A primitive's rules are pure functions of what they declare; anything that looks at memory
layout, data values or array sizes to pick a faster computation (a bit-select instead of
``np.where``, an in-place pass on a fresh temporary, an im2col convolution) lives here, one
module per family, and the primitive's ``impl`` calls it. Kernels take and return raw
backend arrays (numpy or cupy) and know nothing of tracers.
"""
