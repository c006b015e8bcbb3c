"""jnp.vectorize: numpy's vectorize as vmap over the broadcast loop
dimensions, with generalized-ufunc signatures ('(n),(n)->()')."""

import functools
import re

import jax.numpy as jnp
from jax._src.vmap import vmap

_DIMS = re.compile(r'\(([^()]*)\)')


def _parse_signature(signature):
    try:
        ins, outs = signature.replace(' ', '').split('->')
    except ValueError:
        raise ValueError(f'not a valid gufunc signature: {signature}') from None

    def groups(s):
        found = _DIMS.findall(s)
        if ','.join(f'({g})' for g in found) != s:
            raise ValueError(f'not a valid gufunc signature: {signature}')
        return [tuple(d for d in g.split(',') if d) for g in found]
    return groups(ins), groups(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """Applies `pyfunc` over the leading (broadcast) dimensions of its
    arguments; `signature` names the core dimensions each one keeps."""
    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        excluded_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = [k for k in kwargs if k not in excluded]
        positions = [i for i in range(len(args)) if i not in excluded]
        operands = [jnp.asarray(args[i]) for i in positions] + [jnp.asarray(kwargs[k]) for k in mapped_kw]
        if signature is None:
            core = [()] * len(operands)
        else:
            core, _ = _parse_signature(signature)
            if len(core) != len(operands):
                raise TypeError(f'wrong number of positional arguments: expected {len(core)}, got {len(operands)}')
        sizes = {}
        loop_shapes = []
        for x, dims in zip(operands, core):
            if x.ndim < len(dims):
                raise ValueError(f'input with shape {x.shape} does not have enough dimensions for all core '
                                 f'dimensions {dims} in signature {signature!r}')
            for name, size in zip(dims, x.shape[x.ndim - len(dims):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f'inconsistent size for core dimension {name!r}: {size} vs {sizes[name]}')
            loop_shapes.append(x.shape[:x.ndim - len(dims)])
        loop = jnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        operands = [jnp.broadcast_to(x, tuple(loop) + x.shape[x.ndim - len(dims):])
                    for x, dims in zip(operands, core)]

        def call(*xs):
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            kw = dict(excluded_kw)
            kw.update(zip(mapped_kw, xs[len(positions):]))
            return pyfunc(*full, **kw)
        f = call
        for _ in loop:
            f = vmap(f)
        return f(*operands)
    return wrapped
