"""jax.grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev, hessian.

Each runs the function once in a PrimalTrace (values computed where the call
is, the program recorded), then walks the recorded program: backward for
reverse mode, forward for tangents. Inside a pmap the gradient's equations
join the pmap's program; outside, they run at once.
"""

import functools

import numpy as np

from jax._src import core, tree_util
from jax._src.autodiff import engine, primal_trace


def _check_callable(fun):
    if not callable(fun):
        raise TypeError(f'Expected a callable value, got {fun!r}')


def _argnums(argnums):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f'argnums must be an int or a tuple of ints, got {argnums!r}')
    return nums


def _check_enough_args(argnums, args):
    nums = _argnums(argnums)
    if nums and max(nums) >= len(args):
        raise TypeError(f'differentiating with respect to argnums={argnums!r} requires at least {max(nums) + 1} '
                        f'positional arguments to be passed by the caller, but got only {len(args)} positional '
                        'arguments.')


def _check_input(name, allow_int, leaf):
    dt = core.aval_of(leaf).dtype
    if dt.kind in 'biu' and not allow_int:
        err = TypeError(f'{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype of '
                        f'np.inexact), but got {dt.name}. If you want to use Boolean- or integer-valued inputs, use '
                        'vjp or set allow_int to True.')
        err._spmd_hint = 'pass floats (1.0, not 1) or convert with .astype(jnp.float32)'
        raise err


def _check_scalar_output(name, ans):
    if not isinstance(ans, (core.Array, int, float, np.ndarray, np.generic)):
        raise TypeError(f'Gradient only defined for scalar-output functions. Output was {ans}.')
    aval = core.aval_of(ans)
    if aval.shape != ():
        extract = ''
        if aval.size == 1:
            extract = f"extract the scalar with output.reshape(()){' or output[0]' if aval.ndim == 1 else ''}, "
        raise TypeError(f'Gradient only defined for scalar-output functions. Output had shape: {aval.shape}. To get '
                        f'the gradient, {extract}reduce the output to a scalar with output.sum(), or use '
                        'jax.jacobian to differentiate a function with a non-scalar output.')
    if aval.dtype.kind != 'f':
        raise TypeError(f'{name} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but '
                        f'got {aval.dtype.name}. For differentiation of functions with integer outputs, use jax.vjp '
                        'directly.')


def _record(fun, args, kwargs, argnums, has_aux, purpose):
    """Runs fun with the arguments at `argnums` as the differentiated inputs."""
    nums = _argnums(argnums)
    leaves, in_tree = tree_util.tree_flatten(tuple(args[i] for i in nums))

    def flat(*xs):
        full = list(args)
        for i, v in zip(nums, in_tree.unflatten(list(xs))):
            full[i] = v
        return fun(*full, **kwargs)
    rec = primal_trace.record(flat, leaves, purpose, has_aux, info_from=fun)
    return rec, leaves, in_tree


def _ones_like(x):
    """grad's seed, as JAX's lax._one: a scalar output's is the literal 1, a
    larger one's a broadcast of it."""
    aval = core.aval_of(x)
    one = np.ones((), dtype=aval.dtype)
    return one if aval.shape == () else core.bind1('broadcast_in_dim', one, shape=aval.shape, broadcast_dimensions=())


def _pullback(rec, leaves, in_tree):
    """The vjp function of a recorded call: output cotangents -> input cotangents."""
    active = [True] * len(leaves) + [False] * len(rec.captured)

    def pullback(ct):
        ct_leaves, ct_tree = tree_util.tree_flatten(ct)
        if ct_tree != rec.out_tree:
            raise ValueError(f'unexpected tree structure of argument to vjp function: got {ct_tree}, but expected to '
                             f'match {rec.out_tree}')
        for c, o in zip(ct_leaves, rec.out_primals):
            ca, oa = core.aval_of(c), core.aval_of(o)
            if ca.shape != oa.shape:
                raise ValueError(f'unexpected JAX type (e.g. shape/dtype) for argument to vjp function: got '
                                 f'{ca.str_short()}, but expected {oa.str_short()} because the corresponding output '
                                 f'of the function had JAX type {oa.str_short()}')
        in_cts = engine.backward_pass(rec.program, rec.primals, ct_leaves, active)
        cts = [engine.zeros(core.aval_of(l)) if c is None else c for c, l in zip(in_cts, leaves)]
        return tuple(in_tree.unflatten(cts))
    return pullback


def _tangents_of(rec, leaves, tangents):
    outs = engine.forward_tangents(rec.program, rec.primals, list(tangents) + [None] * len(rec.captured))
    return [engine.zeros(core.aval_of(o)) if t is None else t for t, o in zip(outs, rec.out_primals)]


def _wraps(fun, wrapper):
    try:
        return functools.wraps(fun)(wrapper)
    except (AttributeError, TypeError):
        return wrapper


# --- reverse mode --------------------------------------------------------------------

def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    _check_callable(fun)
    _argnums(argnums)

    def value_and_grad_f(*args, **kwargs):
        _check_enough_args(argnums, args)
        for i in _argnums(argnums):
            for leaf in tree_util.tree_leaves(args[i]):
                _check_input('grad', allow_int, leaf)
        rec, leaves, in_tree = _record(fun, args, kwargs, argnums, has_aux, 'jax.grad')
        ans = rec.out_tree.unflatten(rec.out_primals)
        _check_scalar_output('grad', ans)
        g = _pullback(rec, leaves, in_tree)(_ones_like(ans))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, rec.aux) if has_aux else ans), g
    return _wraps(fun, value_and_grad_f)


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    def grad_f(*args, **kwargs):
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return _wraps(fun, grad_f)


def vjp(fun, *primals, has_aux=False, reduce_axes=()):
    _check_callable(fun)
    rec, leaves, in_tree = _record(fun, primals, {}, tuple(range(len(primals))), has_aux, 'jax.vjp')
    out = rec.out_tree.unflatten(rec.out_primals)
    pullback = _pullback(rec, leaves, in_tree)
    return (out, pullback, rec.aux) if has_aux else (out, pullback)


# --- forward mode ---------------------------------------------------------------------

def _check_tangents(primals, tangents):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError('primal and tangent arguments to jax.jvp must be tuples or lists; found '
                        f'{type(primals).__name__} and {type(tangents).__name__}.')
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError('primal and tangent arguments to jax.jvp must have the same tree structure; primals have tree '
                        f'structure {p_tree} whereas tangents have tree structure {t_tree}.')
    for p, t in zip(p_leaves, t_leaves):
        pa, ta = core.aval_of(p), core.aval_of(t)
        if pa.dtype.kind == 'f' and pa.dtype != ta.dtype:
            raise TypeError('primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case '
                            'of int/bool primal dtype the tangent dtype must be float0.Got primal dtype '
                            f'{pa.dtype.name} and so expected tangent dtype {pa.dtype.name}, but got tangent dtype '
                            f'{ta.dtype.name} instead.')
        if pa.shape != ta.shape:
            raise ValueError('jvp called with different primal and tangent shapes;Got primal shape '
                             f'{pa.shape} and tangent shape as {ta.shape}')
    return t_leaves


def jvp(fun, primals, tangents, has_aux=False):
    _check_callable(fun)
    t_leaves = _check_tangents(primals, tangents)
    rec, leaves, _ = _record(fun, tuple(primals), {}, tuple(range(len(primals))), has_aux, 'jax.jvp')
    touts = _tangents_of(rec, leaves, t_leaves)
    out = rec.out_tree.unflatten(rec.out_primals)
    tout = rec.out_tree.unflatten(touts)
    return (out, tout, rec.aux) if has_aux else (out, tout)


def linearize(fun, *primals, has_aux=False):
    _check_callable(fun)
    rec, leaves, in_tree = _record(fun, primals, {}, tuple(range(len(primals))), has_aux, 'jax.linearize')

    def f_jvp(*tangents):
        t_leaves = _check_tangents(primals, tangents)
        return rec.out_tree.unflatten(_tangents_of(rec, leaves, t_leaves))
    out = rec.out_tree.unflatten(rec.out_primals)
    return (out, f_jvp, rec.aux) if has_aux else (out, f_jvp)


# --- Jacobians ---------------------------------------------------------------------------

def _basis(leaf, k):
    """The k-th unit vector shaped like `leaf`."""
    aval = core.aval_of(leaf)
    e = np.zeros(aval.size, dtype=aval.dtype)
    e[k] = 1
    return e.reshape(aval.shape)


def _assemble(out_tree, in_tree, blocks, single):
    """blocks[j][k]: d out_j / d in_k, shaped out_j.shape + in_k.shape."""
    per_out = [in_tree.unflatten(row) for row in blocks]
    if single:
        per_out = [t[0] for t in per_out]
    return out_tree.unflatten(per_out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    _check_callable(fun)

    def jacfun(*args, **kwargs):
        import jax.numpy as jnp
        _check_enough_args(argnums, args)
        for i in _argnums(argnums):
            for leaf in tree_util.tree_leaves(args[i]):
                _check_input('jacfwd', False, leaf)
        rec, leaves, in_tree = _record(fun, args, kwargs, argnums, has_aux, 'jax.jacfwd')
        blocks = [[None] * len(leaves) for _ in rec.out_primals]
        for k, leaf in enumerate(leaves):
            columns = []
            for e in range(core.aval_of(leaf).size):
                t = [None] * len(leaves)
                t[k] = _basis(leaf, e)
                columns.append(_tangents_of(rec, leaves, t))
            in_shape = core.aval_of(leaf).shape
            for j, out in enumerate(rec.out_primals):
                out_shape = core.aval_of(out).shape
                if columns:
                    stacked = jnp.stack([c[j] for c in columns], axis=-1)
                else:
                    stacked = jnp.zeros(out_shape + (0,), core.aval_of(out).dtype)
                blocks[j][k] = jnp.reshape(stacked, out_shape + in_shape)
        jac = _assemble(rec.out_tree, in_tree, blocks, isinstance(argnums, int))
        return (jac, rec.aux) if has_aux else jac
    return _wraps(fun, jacfun)


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    _check_callable(fun)

    def jacfun(*args, **kwargs):
        import jax.numpy as jnp
        _check_enough_args(argnums, args)
        for i in _argnums(argnums):
            for leaf in tree_util.tree_leaves(args[i]):
                _check_input('jacrev', allow_int, leaf)
        rec, leaves, in_tree = _record(fun, args, kwargs, argnums, has_aux, 'jax.jacrev')
        active = [True] * len(leaves) + [False] * len(rec.captured)
        blocks = []
        for j, out in enumerate(rec.out_primals):
            rows = []
            for e in range(core.aval_of(out).size):
                cts = [None] * len(rec.out_primals)
                cts[j] = _basis(out, e)
                in_cts = engine.backward_pass(rec.program, rec.primals, cts, active)
                rows.append([engine.zeros(core.aval_of(l)) if c is None else c for c, l in zip(in_cts, leaves)])
            out_shape = core.aval_of(out).shape
            row = []
            for k, leaf in enumerate(leaves):
                in_shape = core.aval_of(leaf).shape
                if rows:
                    stacked = jnp.stack([r[k] for r in rows])
                else:
                    stacked = jnp.zeros((0,) + in_shape, core.aval_of(leaf).dtype)
                row.append(jnp.reshape(stacked, out_shape + in_shape))
            blocks.append(row)
        jac = _assemble(rec.out_tree, in_tree, blocks, isinstance(argnums, int))
        return (jac, rec.aux) if has_aux else jac
    return _wraps(fun, jacfun)


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    return jacfwd(jacrev(fun, argnums, has_aux), argnums, has_aux)
