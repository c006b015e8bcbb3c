"""checkify for user checks: `check(pred, msg, *args)`
raises at once on concrete values and, inside `checkify(f)`, becomes part of
f's result, so that jit- and pmap-staged code reports the first failed check
as JAX does (`err.get()`, `err.throw()`). chex's assertions are built on it.

The automatic checks (NaNs, out-of-bounds indices, division by zero) are not
instrumented: asking checkify for them is a NotImplementedError, not a
silent pass."""

import jax.numpy as jnp
from jax import errors
from jax._src import core, tree_util


class ErrorCategory:
    """The kinds of error checkify can look for (JAX's ErrorCategory)."""


class FailedCheckError(ErrorCategory):
    pass


class NaNError(ErrorCategory):
    pass


class OOBError(ErrorCategory):
    pass


class DivisionByZeroError(ErrorCategory):
    pass


user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

_contexts = []  # one list of recorded checks per active checkify(f) call


def _check_format_args(args, kwargs):
    for leaf in tree_util.tree_leaves((args, kwargs)):
        if not isinstance(leaf, core.Array) and not hasattr(leaf, 'dtype'):
            raise TypeError(f'Formatting arguments to checkify.check need to be PyTrees of arrays, but got {leaf!r} '
                            f'of type {type(leaf)}.')


def _message(msg, args, kwargs):
    def concrete(tree):
        return tree_util.tree_map(lambda a: jnp.asarray(a).item() if jnp.asarray(a).size == 1 else jnp.asarray(a),
                                  tree)
    return f'{msg.format(*concrete(args), **concrete(kwargs))} (`check` failed)'


def check(pred, msg, *fmt_args, **fmt_kwargs):
    """Fails with `msg` (formatted with the arrays given) where `pred` is false."""
    _check_format_args(fmt_args, fmt_kwargs)
    failed = jnp.logical_not(jnp.all(jnp.asarray(pred)))
    if _contexts:
        _contexts[-1].append((failed, msg, fmt_args, fmt_kwargs))
        return
    if isinstance(failed, core.Tracer):
        raise ValueError('Cannot abstractly evaluate a checkify.check which was not functionalized. This probably '
                         'means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it through '
                         '`checkify.checkify`.')
    if bool(failed):
        raise errors.JaxRuntimeError(_message(msg, fmt_args, fmt_kwargs))


class Error:
    """What checkify(f) returns beside f's output: the first failed check, if any."""

    def __init__(self, failed, messages, fmt):
        self._failed = list(failed)      # one bool array per check, in program order
        self._messages = tuple(messages)
        self._fmt = list(fmt)            # (args, kwargs) per check

    def get(self):
        for failed, msg, (args, kwargs) in zip(self._failed, self._messages, self._fmt):
            if bool(jnp.any(jnp.asarray(failed))):
                return _message(msg, args, kwargs)
        return None

    def get_exception(self):
        text = self.get()
        return None if text is None else errors.JaxRuntimeError(text)

    def throw(self):
        e = self.get_exception()
        if e is not None:
            raise e

    def __repr__(self):
        text = self.get()
        return 'Error(No errors)' if text is None else f'Error({text})'


tree_util.register_pytree_node(Error, lambda e: ((e._failed, e._fmt), e._messages),
                               lambda messages, kids: Error(kids[0], messages, kids[1]))


def checkify(f, errors=user_checks):
    """f returning (Error, output): its checks are results, not exceptions."""
    errors = frozenset(errors)
    unsupported = errors - user_checks
    if unsupported:
        names = ', '.join(sorted(c.__name__ for c in unsupported))
        raise NotImplementedError(f'checkify: spmdsim checks only user checks (checkify.user_checks), not {names}; '
                                  'pass errors=checkify.user_checks')

    def checked(*args, **kwargs):
        _contexts.append([])
        try:
            out = f(*args, **kwargs)
        finally:
            recorded = _contexts.pop()
        err = Error([r[0] for r in recorded], [r[1] for r in recorded], [(r[2], r[3]) for r in recorded])
        return err, out
    return checked
