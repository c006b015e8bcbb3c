# spmd: devices=2 expect=deadlock expect-decision-line=18
# A while_loop whose condition reads device data: device 1 starts with a
# larger value and leaves the loop one iteration earlier, so device 0 waits
# alone at the pmax inside the body (used here to log the largest state).
import jax
import jax.numpy as jnp
from jax import lax


def cond_fun(state):
    return state < 4.0

def body_fun(state):
    largest = lax.pmax(state, 'i')
    return state + 1.0 + 0.0 * largest

def f(x):
    return lax.while_loop(cond_fun, body_fun, x)


print(jax.pmap(f, axis_name='i')(jnp.array([0.0, 1.5])))
