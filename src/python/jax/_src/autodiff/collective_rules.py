"""Differentiation rules of collectives inside pmap, as JAX defines them.

Collectives are linear: a tangent goes through the same collective, and a
cotangent through its transpose. psum's transpose is psum, so inside a pmap
the gradient of psum(x) with respect to a device's own x is the number of
devices, not 1: JAX's known scaling (each device's cotangent of the
replicated sum is summed again). pmean's transpose is pmean. all_gather and
psum_scatter transpose into each other, ppermute into the inverse
permutation, all_to_all into all_to_all with split and concat axes swapped.
pmax and pmin have no rule in JAX, nor here.
"""

from jax._src import core
from jax._src.autodiff.rules import defrules, not_implemented, p


def _same(eq, primals, tangents, outs):
    return [None if t is None else core.bind1(eq.primitive, t, **eq.params) for t in tangents]


def _params(eq, *drop):
    return {k: v for k, v in eq.params.items() if k not in drop}


def _psum_vjp(eq, cts, primals, outs, active):
    live = [c for c, a in zip(cts, active) if a and c is not None]
    results = iter(core.bind(eq.primitive, *live, **eq.params) if live else [])
    return [next(results) if a and c is not None else None for c, a in zip(cts, active)]


defrules('psum', _same, _psum_vjp)
defrules('pmean', _same, _psum_vjp)


def _no_rule(name):
    def rule(*args):
        raise not_implemented(name, f'JAX defines no gradient for lax.{name}; to differentiate a maximum over '
                                    f'devices, all_gather the values and take jnp.{name[1:]} over the gathered axis')
    return rule


defrules('pmax', _no_rule('pmax'), _no_rule('pmax'))
defrules('pmin', _no_rule('pmin'), _no_rule('pmin'))


def _all_gather_vjp(eq, cts, primals, outs, active):
    ps = _params(eq, 'axis')
    return [p('psum_scatter', cts[0], scatter_dimension=eq.params['axis'], **ps)]


def _psum_scatter_vjp(eq, cts, primals, outs, active):
    ps = _params(eq, 'scatter_dimension')
    return [p('all_gather', cts[0], axis=eq.params['scatter_dimension'], **ps)]


def _ppermute_vjp(eq, cts, primals, outs, active):
    flat = eq.params['perm']
    inverse = []
    for i in range(0, len(flat), 2):
        inverse += [flat[i + 1], flat[i]]
    return [p('ppermute', cts[0], axes=eq.params['axes'], perm=tuple(inverse))]


def _all_to_all_vjp(eq, cts, primals, outs, active):
    ps = _params(eq, 'split_axis', 'concat_axis')
    return [p('all_to_all', cts[0], split_axis=eq.params['concat_axis'], concat_axis=eq.params['split_axis'], **ps)]


defrules('all_gather', _same, _all_gather_vjp)
defrules('psum_scatter', _same, _psum_scatter_vjp)
defrules('ppermute', _same, _ppermute_vjp)
defrules('all_to_all', _same, _all_to_all_vjp)
