"""jax.example_libraries.optimizers: JAX's functional optimizers. Each is a
triple (init_fun, update_fun, get_params) over a pytree of parameters:

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    state = opt_init(params)
    state = opt_update(step, grads, state)

The state is a pytree (it passes through jit and pmap). pack/unpack_optimizer_state
are not provided."""

from collections import namedtuple
import functools

import jax.numpy as jnp
from jax import tree_util

OptimizerState = namedtuple('OptimizerState', ['leaf_states', 'tree_def'])
Optimizer = namedtuple('Optimizer', ['init_fn', 'update_fn', 'params_fn'])

tree_util.register_pytree_node(OptimizerState, lambda s: (s.leaf_states, s.tree_def),
                               lambda tree_def, leaves: OptimizerState(list(leaves), tree_def))


def optimizer(opt_maker):
    """Lifts an optimizer of one array (init, update, get_params on a leaf) to pytrees of them."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, tree_def = tree_util.tree_flatten(x0_tree)
            return OptimizerState([init(x0) for x0 in leaves], tree_def)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            grads, grad_def = tree_util.tree_flatten(grad_tree)
            if grad_def != opt_state.tree_def:
                raise TypeError(f'optimizer update function was passed a gradient tree that did not match the '
                                f'parameter tree structure with which it was initialized: parameter tree '
                                f'{opt_state.tree_def} and grad tree {grad_def}.')
            return OptimizerState([update(i, g, s) for g, s in zip(grads, opt_state.leaf_states)],
                                  opt_state.tree_def)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            return tree_util.tree_unflatten(opt_state.tree_def, [get_params(s) for s in opt_state.leaf_states])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# --- optimizers of one array ------------------------------------------------

@optimizer
def sgd(step_size):
    step_size = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - step_size(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def nesterov(step_size, mass):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adagrad(step_size, momentum=0.9):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m  # first moment
        v = (1 - b2) * jnp.square(g) + b2 * v  # second moment
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))  # bias corrections
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, (lambda state: state[0])


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps), m, u
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, (lambda state: state[0])


# --- step-size schedules -----------------------------------------------------

def constant(step_size):
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    def schedule(i):
        t = jnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * t)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(i):
        step_num = jnp.minimum(i, decay_steps)
        return (step_size - final_step_size) * (1 - step_num / decay_steps) ** power + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError('boundaries and values must be sequences')
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError('boundaries length must be one shorter than values length')

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- gradient utilities --------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of a pytree of arrays, as if they were one flat vector."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """grad_tree scaled down to l2 norm max_norm where its norm is larger."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)
