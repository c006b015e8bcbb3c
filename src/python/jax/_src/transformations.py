"""jax.eval_shape, jax.checkpoint, jax.named_call (vmap is in vmap.py)."""

import numpy as np

from jax._src import core, tree_util


def eval_shape(fun, *args, **kwargs):
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    avals = [core.ShapedArray(core.aval_of(l).shape, core.aval_of(l).dtype) for l in leaves]

    def flat(*xs):
        a, k = tree.unflatten(list(xs))
        return fun(*a, **k)
    program, out_tree, _ = core.trace_function(flat, avals, 'jax.eval_shape')
    return out_tree.unflatten([ShapeDtypeStruct(tuple(a[0]), np.dtype(a[1])) for a in program.out_avals])


class ShapeDtypeStruct:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f'ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})'

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


def checkpoint(fun=None, **kwargs):
    """Rematerialization changes memory, not values: the function itself."""
    if fun is None:
        return lambda f: f
    return fun


remat = checkpoint


def named_call(fun, *, name=None):
    return fun


class named_scope:
    """`with jax.named_scope('block'):` names the operations inside in JAX's
    HLO (for profiles); spmdsim has no HLO, so it only checks the name."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError('named_scope name must be a string.')
        self.name = name

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


class ensure_compile_time_eval:
    """`with jax.ensure_compile_time_eval():` operations on concrete values
    compute at once even under jit or pmap (their results are concrete
    arrays a program can branch on); those on traced values still trace."""

    def __enter__(self):
        core.compile_time_eval[0] += 1
        return None

    def __exit__(self, *exc):
        core.compile_time_eval[0] -= 1
        return False
