"""funcgrad.random: functional, splittable PRNG keys with JAX's API and JAX's numbers.

    from funcgrad import random
    key = random.key(0)                       # or random.PRNGKey(0): a raw uint32[2] key
    k1, k2 = random.split(key)
    w = random.normal(k1, (3, 2)) * 0.1       # no global state: same key, same numbers
    g = funcgrad.grad(lambda mu: random.normal(k2, (5,)).sum() + mu)(1.0)

**The generator** is JAX's default, Threefry-2x32 (Salmon et al., 2011), with
``jax_threefry_partitionable=True``, the default of JAX 0.10 (and since 0.5): `split`,
`fold_in` and every draw hash a 64-bit counter per output element. The hash is one
registry primitive (`funcgrad.primitives.random.threefry2x32`, vectorised uint32 numpy,
run by cupy too); every sampler is composed of primitives, reads no array values and takes
its shape and dtype as static arguments, so draws can be traced and batched.

**JAX's numbers.** For the same key, shape and dtype the results equal those of JAX 0.10.2
on the CPU with ``jax_enable_x64=True``. The draws that go through numpy's log or tan
(cauchy, gumbel, logistic, the gamma family) are bit for bit where numpy calls the C
library for those; on CPUs where it runs its AVX-512 loops (Intel's SVML,
`funcgrad.test_util.numpy_uses_svml`) they are within a few ulp of JAX's instead:

- bit for bit: `split`, `fold_in`, `bits`, `uniform` (any minval/maxval: XLA's fused
  multiply-add is reproduced), `randint`, `bernoulli`, `rademacher`, `permutation`,
  `choice` (with and without p: XLA's blocked cumsum is reproduced), `normal` (JAX's
  Giles erf_inv, with XLA's log1p), `exponential`, `gumbel`, `laplace`, `logistic`,
  `cauchy`, `categorical`, `poisson`, `orthogonal` (float64), and in float64 `gamma`,
  `loggamma`, `beta`, `t`, `chisquare`, `f`, `pareto`, `lognormal` and
  `generalized_normal` (XLA's log, log1p and exp are reproduced, see
  funcgrad.primitives.kernels.random);
- within 2 ulp: `dirichlet` and `ball`, whose few-term sums XLA adds in its own order;
- close: float32 gamma-based draws (~98% bit for bit, the rest within ~1e-5 relative;
  XLA divides by sqrt(d) with the processor's approximate reciprocal square root, which
  portable code cannot reproduce, and in rare cases that flips an acceptance test),
  `truncated_normal` (its bounds go through erf, here scipy's: ~1e-13 relative in float64,
  ~1e-5 in float32), `multivariate_normal` (LAPACK factorizations and matrix products
  round in their own order: ~1e-13) and float32 `orthogonal`.

funcgrad follows numpy's 64-bit defaults, so the default dtypes are JAX's x64 ones:
float64 draws, int64 `randint`/`poisson`/`rademacher`, uint64 `bits`, and integer seeds
read as int64. With ``jax_enable_x64`` disabled (``funcgrad.config``), the defaults are
JAX's 32-bit ones (float32 draws, int32 integers, uint32 bits, a seed's low 32 bits), and
so are the numbers: the same as JAX run with its default configuration. Either way, an
explicit ``dtype=float32`` gives JAX's float32 numbers.

**Keys.** `PRNGKey(seed)` gives a raw ``uint32[2]`` Array, `key(seed)` a typed
`KeyArray` (dtype ``key<fry>``, shape ``()``) over the same data; `key_data` and
`wrap_key_data` convert, and every function takes either kind and returns what it was
given. Keys are immutable, and a `KeyArray` is a pytree whose leaf is its data.

**Gradients** flow through the parameters by reparameterisation: ``normal(k) * sigma +
mu`` is ordinary arithmetic, `uniform` differentiates in minval and maxval, and `gamma`
(hence `beta`, `dirichlet`, `t`, `chisquare`, `f`) by implicit reparameterisation, as in
JAX: d x / d a = -(dP(a, x)/da) / p(x; a) for the gamma CDF P, written in funcgrad ops.
"""
from funcgrad.random._keys import (KeyArray, PRNGKey, clone, fold_in, key, key_data,
                                   key_impl, split, wrap_key_data)
from funcgrad.random._continuous import (bits, cauchy, exponential, gumbel, laplace, logistic,
                                         normal, truncated_normal, uniform)
from funcgrad.random._discrete import (bernoulli, categorical, choice, permutation, poisson,
                                       rademacher, randint)
from funcgrad.random._gamma import (ball, beta, chisquare, dirichlet, f, gamma,
                                    generalized_normal, loggamma, lognormal, pareto, t)
from funcgrad.random._multivariate import multivariate_normal, orthogonal

__all__ = ["KeyArray", "PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "clone",
           "split", "fold_in", "bits", "uniform", "normal", "truncated_normal", "exponential",
           "laplace", "logistic", "cauchy", "gumbel", "randint", "bernoulli", "rademacher",
           "permutation", "choice", "categorical", "poisson", "gamma", "loggamma", "beta",
           "dirichlet", "t", "chisquare", "f", "generalized_normal", "ball", "pareto",
           "lognormal", "multivariate_normal", "orthogonal"]
