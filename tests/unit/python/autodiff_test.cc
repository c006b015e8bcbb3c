// Autodiff as a program uses it on spmdsim's devices: gradients inside a pmap
// with the collectives' transposes, the positions gradient equations carry
// (a deadlock in a backward pass names the forward expression), and the
// parameter drift check. The numeric rules are checked against finite
// differences in tests/python/test_autodiff_*.py.

#include "frontend_test_util.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

TEST_CASE("python::autodiff: a data-parallel step's gradients, averaged with pmean", "[python][autodiff]") {
  auto r = run(R"PY(
from functools import partial
import jax, jax.numpy as jnp
from jax import lax
def loss(w, x):
    return jnp.sum((x * w - 1.0) ** 2)
@partial(jax.pmap, axis_name='i')
def step(w, x):
    l, g = jax.value_and_grad(loss)(w, x)
    return w - 0.5 * lax.pmean(g, 'i'), lax.psum(l, 'i')
w = jax.device_put_replicated(jnp.float32(0.0), jax.devices())
x = jnp.arange(1.0, 5.0)
w, l = step(w, x)
print(w.tolist(), l.tolist())
print(jax.pmap(jax.grad(lambda v: lax.psum(v * v, 'i')), axis_name='i')(x).tolist())
print(jax.make_jaxpr(jax.grad(lambda v: jnp.sin(v) * 2.0))(1.0))
)PY");
  // d/dw sum((x w - 1)^2) = 2 x (x w - 1) = -2 x at w = 0; pmean over
  // x = 1..4 is -5, so w = 2.5; the loss is sum over devices of 1.
  CHECK(r.out ==
        "[2.5, 2.5, 2.5, 2.5] [4.0, 4.0, 4.0, 4.0]\n"
        "[8.0, 16.0, 24.0, 32.0]\n"  // psum's transpose is psum: 4 devices x 2x
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = sin a\n"
        "    c:f32[] = mul b 2.0:f32[]\n"
        "    d:f32[] = mul 1.0:f32[] 2.0:f32[]\n"  // grad's seed: the literal 1, as JAX's
        "    e:f32[] = cos a\n"
        "    f:f32[] = mul d e\n"
        "  in (f,) }\n");
  // device_put_replicated still works, with JAX's deprecation warning (0.8.1).
  CHECK(r.err ==
        "t.py:11: DeprecationWarning: jax.device_put_replicated is deprecated; use jax.device_put instead. See "
        "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a drop-in replacement.\n"
        "  w = jax.device_put_replicated(jnp.float32(0.0), jax.devices())\n");
}

TEST_CASE("python::autodiff: a collective's transpose meets at the rendezvous under the forward's position",
          "[python][autodiff][deadlock]") {
  Report rep = run_error<DeadlockError>(R"PY(import jax, jax.numpy as jnp
from jax import lax
def f(x):
    y = lax.cond(lax.axis_index('i') == 0, lambda v: v, lambda v: lax.psum(v, 'i'), x)
    return jnp.sum(y)
jax.pmap(jax.grad(f), axis_name='i')(jnp.ones(4))
)PY");
  CHECK(rep.kind == "Deadlock");
  CHECK(rep.where.line == 4);
  CHECK(rep.message.find("psum") != std::string::npos);
}

TEST_CASE("python::autodiff: parameter drift is a warning naming the update, once", "[python][autodiff][drift]") {
  auto r = run(R"PY(import jax, jax.numpy as jnp
from jax import lax
def step(w, x):
    g = jax.grad(lambda w: jnp.sum((x * w) ** 2))(w)
    return w - 0.1 * g
good = jax.pmap(lambda w, x: w - 0.1 * lax.pmean(jax.grad(lambda w: jnp.sum((x * w) ** 2))(w), 'i'), axis_name='i')
bad = jax.pmap(step, axis_name='i')
w = jnp.stack([jnp.ones(2)] * jax.device_count())
x = jnp.arange(8.0).reshape(4, 2)
print(good(w, x)[:, 0].tolist())
print(bad(bad(w, x), x)[:, 0].tolist())
same = jnp.ones((4, 2))
print(bad(w, same)[:, 0].tolist())
)PY");
  CHECK(r.out == "[-1.7999999523162842, -1.7999999523162842, -1.7999999523162842, -1.7999999523162842]\n"
                 "[1.0, 0.03999999165534973, 4.840000152587891, 38.44000244140625]\n"
                 "[0.800000011920929, 0.800000011920929, 0.800000011920929, 0.800000011920929]\n");
  CHECK(r.err ==
        "warning: t.py:5: parameter drift: output of step differs between devices although w entered the pmap "
        "replicated: all 4 devices hold different values (largest difference from device 0: 9.6 in "
        "output). At t.py:5:12 the replicated value is combined with a device-varying one, such as a gradient "
        "of each device's own batch.\n"
        "  hint: average it over the devices first, e.g. grads = jax.lax.pmean(grads, 'i'), so every copy gets the "
        "same update\n");
}
