"""PyTorch 2.13's texts for what it removed or deprecated (its exact words: code that
matches on them, and users who search for them, find the same)."""

__all__ = ["REMOVED", "LU_DEPRECATED", "TRIANGULAR_SOLVE_DEPRECATED"]

# the RuntimeError of each function PyTorch 2 removed
REMOVED = {
    "eig": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` '
        'rather than real tensors mimicking complex tensors.\n'
        '\n'
        'L, _ = torch.eig(A) should be replaced with:\n'
        'L_complex = torch.linalg.eigvals(A)\n'
        '\n'
        'and\n'
        '\n'
        'L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n'
        'L_complex, V_complex = torch.linalg.eig(A)'),
    "lstsq": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n'
        '`torch.linalg.lstsq` has reversed arguments and does not return the QR '
        'decomposition in the returned tuple (although it returns other information '
        'about the problem).\n'
        '\n'
        'To get the QR decomposition consider using `torch.linalg.qr`.\n'
        '\n'
        'The returned solution in `torch.lstsq` stored the residuals of the solution '
        'in the last m - n columns of the returned value whenever m > n. In '
        "torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
        'returned named tuple.\n'
        '\n'
        'The unpacking of the solution, as in\n'
        'X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n'
        'should be replaced with:\n'
        'X = torch.linalg.lstsq(A, B).solution'),
    "solve": (
        'This function was deprecated since version 1.9 and is now removed. '
        '`torch.solve` is deprecated in favor of `torch.linalg.solve`. '
        '`torch.linalg.solve` has its arguments reversed and does not return the LU '
        'factorization.\n'
        '\n'
        'To get the LU factorization see `torch.lu`, which can be used with '
        '`torch.lu_solve` or `torch.lu_unpack`.\n'
        'X = torch.solve(B, A).solution should be replaced with:\n'
        'X = torch.linalg.solve(A, B)'),
    "symeig": (
        'This function was deprecated since version 1.9 and is now removed. The '
        'default behavior has changed from using the upper triangular portion of the '
        'matrix by default to using the lower triangular portion.\n'
        '\n'
        'L, _ = torch.symeig(A, upper=upper) should be replaced with:\n'
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n"
        '\n'
        'and\n'
        '\n'
        'L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n'
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "matrix_rank": (
        'This function was deprecated since version 1.9 and is now removed.\n'
        'Please use the `torch.linalg.matrix_rank` function instead. The parameter '
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
    "reinforce": (
        'reinforce() was removed.\n'
        'Use torch.distributions instead.\n'
        'See https://pytorch.org/docs/main/distributions.html\n'
        '\n'
        'Instead of:\n'
        '\n'
        'probs = policy_network(state)\n'
        'action = probs.multinomial()\n'
        'next_state, reward = env.step(action)\n'
        'action.reinforce(reward)\n'
        'action.backward()\n'
        '\n'
        'Use:\n'
        '\n'
        'probs = policy_network(state)\n'
        '# NOTE: categorical is equivalent to what used to be called multinomial\n'
        'm = torch.distributions.Categorical(probs)\n'
        'action = m.sample()\n'
        'next_state, reward = env.step(action)\n'
        'loss = -m.log_prob(action) * reward\n'
        'loss.backward()\n'),
}

LU_DEPRECATED = (
    'torch.lu is deprecated in favor of torch.linalg.lu_factor / '
    'torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n'
    'LU, pivots = torch.lu(A, compute_pivots)\n'
    'should be replaced with\n'
    'LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\n'
    'and\n'
    'LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\n'
    'should be replaced with\n'
    'LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)')
TRIANGULAR_SOLVE_DEPRECATED = (
    'torch.triangular_solve is deprecated in favor of '
    'torch.linalg.solve_triangularand will be removed in a future PyTorch '
    'release.\n'
    'torch.linalg.solve_triangular has its arguments reversed and does not '
    'return a copy of one of the inputs.\n'
    'X = torch.triangular_solve(B, A).solution\n'
    'should be replaced with\n'
    'X = torch.linalg.solve_triangular(A, B).')
