// jax.pmap in scenarios: in_axes / out_axes pytrees, argument names in
// runtime errors, static arguments, nested pmap, devices, collectives.

#include "frontend_test_util.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

TEST_CASE("python::pmap: in_axes as a tree prefix", "[python][pmap]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
from functools import partial

x = jnp.arange(8).reshape((4, 2))
w = jnp.ones(2)
f = jax.pmap(lambda a, b: a * b, in_axes=(0, None))
print(f(x, w))
# a list in_axes is read as a tuple, as in JAX
print(jax.pmap(lambda a, b: a + b, in_axes=[0, None])(x, 10))
# dict arguments with a dict prefix
params = {'w': jnp.arange(4), 'b': jnp.array(100)}
g = jax.pmap(lambda p: p['w'] + p['b'], in_axes=({'w': 0, 'b': None},))
print(g(params))
# nested tuples; None for a whole subtree
h = jax.pmap(lambda t: t[0] + t[1][0] + t[1][1], in_axes=((0, None),))
print(h((jnp.arange(4), (jnp.array(1), jnp.array(2)))))
# in_axes=1 maps the second axis
print(jax.pmap(lambda c: c.sum(), in_axes=1)(jnp.arange(8).reshape((2, 4))))
# Python scalars are broadcast with in_axes=None
print(jax.pmap(lambda a, s: a * s, in_axes=(0, None))(jnp.arange(4), 3))
# axis_size with nothing mapped: the original pmap (the new one needs a mapped argument)
jax.config.update('jax_pmap_shmap_merge', False)
print(jax.pmap(lambda c: c + lax.axis_index('i'), in_axes=None, axis_name='i', axis_size=3)(jnp.array(10)))
jax.config.update('jax_pmap_shmap_merge', True)
# keyword arguments are mapped over axis 0
print(jax.pmap(lambda a, b: a - b)(jnp.arange(4), b=jnp.ones(4, dtype=jnp.int32)))
# static_broadcasted_argnums passes Python values through
@partial(jax.pmap, static_broadcasted_argnums=(1,))
def scale(a, factor):
    return a * factor if factor > 1 else a
print(scale(jnp.arange(4), 5))
)PY");
  CHECK(r.out ==
        "[[0. 1.]\n [2. 3.]\n [4. 5.]\n [6. 7.]]\n"
        "[[10 11]\n [12 13]\n [14 15]\n [16 17]]\n"
        "[100 101 102 103]\n"
        "[3 4 5 6]\n"
        "[ 4  6  8 10]\n"
        "[0 3 6 9]\n"
        "[10 11 12]\n"
        "[-1  0  1  2]\n"
        "[ 0  5 10 15]\n");
}

TEST_CASE("python::pmap: in_axes that is not a tree prefix", "[python][pmap][errors]") {
  Report r = run_error<ProgramError>(
      "import jax\nimport jax.numpy as jnp\nf = jax.pmap(lambda a, b: a + b, in_axes=(0, None, 0))\n"
      "y = f(jnp.arange(4), 1)\n");
  CHECK(r.kind == "ValueError");
  CHECK(r.message ==
        "pmap in_axes must be an int, None, or a tuple of entries corresponding to the positional arguments passed "
        "to the function, got in_axes=(0, None, 0) for 2 positional arguments.");
  CHECK(r.where.line == 4);
  CHECK(r.where.column == 5);

  r = run_error<ProgramError>(
      "import jax\nimport jax.numpy as jnp\nf = jax.pmap(lambda p: p['w'], in_axes=({'w': 0, 'x': 0},))\n"
      "y = f({'w': jnp.arange(4), 'b': jnp.arange(4)})\n");
  CHECK(r.message ==
        "pmap in_axes specification must be a tree prefix of the corresponding value, got specification ({'w': 0, "
        "'x': 0},) for value tree PyTreeDef(({'b': *, 'w': *},)).");

  r = run_error<ProgramError>("import jax\nimport jax.numpy as jnp\nf = jax.pmap(lambda a: a, in_axes='x')\ny = f(jnp.arange(4))\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "pmap in_axes must be an int, None, or (nested) container with those types as leaves, but got x.");

  r = run_error<ProgramError>("import jax\nf = jax.pmap(lambda a: a)\ny = f('text')\n");
  CHECK(r.kind == "TypeError");
  CHECK(r.message == "Argument 'text' of type <class 'str'> is not a valid JAX type.");
  CHECK_THAT(r.hint, Catch::StartsWith("it is the argument a: "));
}

TEST_CASE("python::pmap: runtime split errors name pytree arguments", "[python][pmap][errors]") {
  Report r = run_error<InvalidArgument>(R"PY(
import jax
import jax.numpy as jnp
def step(params, batch):
    return params['w'] * batch
params = {'w': jnp.ones((4, 3)), 'b': jnp.zeros((4,))}
batch = jnp.ones((8, 3))
out = jax.pmap(step)(params, batch)
)PY");
  CHECK(r.kind == "InputSplitError");
  CHECK(r.where.line == 8);
  std::string all;
  for (const auto& d : r.details) all += d + "\n";
  CHECK(all == "* most axes (2 of them) had size 4, e.g. axis 0 of argument params['b'] of type float32[4];\n"
               "  also params['w']\n"
               "* one axis had size 8: axis 0 of argument batch of type float32[8,3]\n");
  CHECK(r.table.rows.at(1).at(0) == "argument 1 'params['w']'");
}

TEST_CASE("python::pmap: out_axes and pytree outputs", "[python][pmap]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
x = jnp.arange(8).reshape((4, 2))
f = jax.pmap(lambda a: (a, {'s': a.sum(), 'n': None}), axis_name='i')
a, d = f(x)
print(a.shape, d['s'], d['n'])
# out_axes=1 stacks along the second axis
print(jax.pmap(lambda a: a * 10, out_axes=1)(x))
# out_axes=None for a replicated value (the psum)
t = jax.pmap(lambda a: lax.psum(a, 'i'), axis_name='i', out_axes=None)(x)
print(t)
# out_axes as a prefix of a tuple output
s, m = jax.pmap(lambda a: (lax.psum(a, 'i'), a), axis_name='i', out_axes=(None, 0))(x)
print(s, m.shape)
# Python scalars returned become arrays
print(jax.pmap(lambda a: 1.5)(x))
print(jax.pmap(lambda a: None)(x))
)PY");
  CHECK(r.out ==
        "(4, 2) [ 1  5  9 13] None\n"
        "[[ 0 20 40 60]\n [10 30 50 70]]\n"
        "[12 16]\n"
        "[12 16] (4, 2)\n"
        "[1.5 1.5 1.5 1.5]\n"
        "None\n");

  Report e = run_error<InvalidArgument>(
      "import jax\nimport jax.numpy as jnp\nf = jax.pmap(lambda a: a * 2, out_axes=None)\ny = f(jnp.arange(4))\n");
  CHECK(e.kind == "OutAxesError");
  CHECK(e.message ==
        "pmap: out_axes=None for the output but its value differs between devices (device 0 and device 1 differ)");
  CHECK(e.where.line == 4);
}

TEST_CASE("python::pmap: devices, device_count and nested pmap", "[python][pmap]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
print(jax.device_count(), jax.local_device_count(), jax.devices()[:2], jax.devices()[1].id)
f = jax.pmap(lambda a: a + 1, devices=jax.devices()[2:4])
print(f(jnp.arange(2)))
jax.config.update('jax_pmap_shmap_merge', False)  # the original pmap nests (tests/python/test_pmap_merge.py)
def outer(x):
    inner = jax.pmap(lambda y: lax.psum(y, 'j') + 100 * lax.axis_index('i'), axis_name='j')
    return inner(x)
print(jax.pmap(outer, axis_name='i')(jnp.arange(8).reshape((2, 4))))
def both(x):
    return jax.pmap(lambda y: lax.psum(y, ('i', 'j')), axis_name='j')(x)
print(jax.pmap(both, axis_name='i')(jnp.ones((2, 4))))
)PY", 8);
  CHECK(r.out ==
        "8 8 [CpuDevice(id=0), CpuDevice(id=1)] 1\n"
        "[1 2]\n"
        "[[  6   6   6   6]\n [122 122 122 122]]\n"
        "[[8. 8. 8. 8.]\n [8. 8. 8. 8.]]\n");
}

TEST_CASE("python::pmap: a pmap of a pmap object, and an inner axis name that shadows the outer one",
          "[python][pmap][nested]") {
  // Once a crash (issue 19, finding 1): the outer pmap copied the inner
  // one's attributes and ran the inner program with the outer's data.
  auto r = run(R"PY(
import jax, jax.numpy as jnp
from jax import lax
jax.config.update('jax_pmap_shmap_merge', False)  # the original pmap nests
x = jnp.arange(4.0).reshape(2, 2)
print(jax.pmap(jax.pmap(lambda v: lax.psum(v, 'j'), axis_name='j'), axis_name='i')(x).tolist())
inner = jax.pmap(lambda v: (lax.psum(v, 'i'), lax.all_gather(v, 'i'), lax.axis_index('i'),
                            lax.ppermute(v, 'i', [(0, 1), (1, 0)])), axis_name='i')
for out in jax.pmap(inner, axis_name='i')(x):
    print(out.tolist())
print(jax.pmap(jax.pmap(lambda v: lax.psum(v, ('i', 'j')), axis_name='j'), axis_name='i')(x).tolist())
)PY", 4);
  CHECK(r.out ==
        "[[1.0, 1.0], [5.0, 5.0]]\n"
        // The inner 'i' is the one the collectives see: rows are summed, gathered, permuted.
        "[[1.0, 1.0], [5.0, 5.0]]\n"
        "[[[0.0, 1.0], [0.0, 1.0]], [[2.0, 3.0], [2.0, 3.0]]]\n"
        "[[0, 1], [0, 1]]\n"
        "[[1.0, 0.0], [3.0, 2.0]]\n"
        "[[6.0, 6.0], [6.0, 6.0]]\n");
}

TEST_CASE("python::pmap: collectives over pytrees and Python constants", "[python][pmap][collectives]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    i = lax.axis_index('i')
    n = lax.psum(1, 'i')
    g = lax.all_gather(x, 'i')
    tree = lax.psum({'a': x, 'b': (x * 2, 3)}, 'i')
    return (n, tree['a'], tree['b'][0], tree['b'][1], lax.pmean(x, 'i'), lax.pmax(x, 'i'), lax.pmin(x, 'i'),
            lax.all_gather(x.reshape((1,)), 'i'), lax.all_gather(x.reshape((1,)), 'i', tiled=True).shape[0],
            lax.ppermute(x, 'i', [(j, (j + 1) % 4) for j in range(4)]), lax.psum_scatter(jnp.arange(4.0), 'i'),
            lax.all_to_all(jnp.arange(4) + 10 * i, 'i', 0, 0), lax.axis_size('i'), g)
out = jax.pmap(f, axis_name='i')(jnp.arange(4.0))
names = ['n', 'a', 'b0', 'b1', 'pmean', 'pmax', 'pmin', 'gather', 'tiled', 'ring', 'scatter', 'a2a', 'size', 'scalars']
for name, v in zip(names, out):
    print(name, v if name != 'gather' else v[0].ravel())
)PY");
  CHECK(r.out ==
        "n [4 4 4 4]\n"
        "a [6. 6. 6. 6.]\n"
        "b0 [12. 12. 12. 12.]\n"
        "b1 [12 12 12 12]\n"
        "pmean [1.5 1.5 1.5 1.5]\n"
        "pmax [3. 3. 3. 3.]\n"
        "pmin [0. 0. 0. 0.]\n"
        "gather [0. 1. 2. 3.]\n"
        "tiled [4 4 4 4]\n"
        "ring [3. 0. 1. 2.]\n"
        "scatter [ 0.  4.  8. 12.]\n"
        "a2a [[ 0 10 20 30]\n [ 1 11 21 31]\n [ 2 12 22 32]\n [ 3 13 23 33]]\n"
        "size [4 4 4 4]\n"
        "scalars [[0. 1. 2. 3.]\n [0. 1. 2. 3.]\n [0. 1. 2. 3.]\n [0. 1. 2. 3.]]\n");
}

TEST_CASE("python::pmap: axis_name typo is an AxisNameError at the collective", "[python][pmap][errors]") {
  Report r = run_error<AxisNameError>(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
def f(x):
    return lax.psum(x, axis_name='batchh')
y = jax.pmap(f, axis_name='batch')(jnp.arange(4))
)PY");
  CHECK(r.kind == "AxisNameError");
  CHECK(r.where.line == 6);
  CHECK(r.where.column == 12);
  CHECK(r.source_line == "    return lax.psum(x, axis_name='batchh')");
  CHECK(r.device == -1);  // found while tracing, before any device runs

  // On the host there is no bound axis at all.
  r = run_error<AxisNameError>("import jax.numpy as jnp\nfrom jax import lax\ny = lax.psum(jnp.arange(3), 'i')\n");
  CHECK(r.kind == "AxisNameError");
  CHECK(r.where.line == 3);
}

TEST_CASE("python::pmap: axis_index_groups, zero-argument pmap and arg paths", "[python][pmap][collectives]") {
  auto r = run(R"PY(
import jax
import jax.numpy as jnp
from jax import lax
f = jax.pmap(lambda x: lax.psum(x, 'i', axis_index_groups=[[0, 1], [2, 3]]), axis_name='i')
print(f(jnp.arange(4)))
jax.config.update('jax_pmap_shmap_merge', False)  # the original pmap maps over axis_size alone
g = jax.pmap(lambda: lax.axis_index('i') * 2, axis_name='i', axis_size=3)
print(g())
)PY");
  CHECK(r.out == "[1 1 5 5]\n[0 2 4]\n");

  Report e = run_error<InvalidArgument>(R"PY(
import jax
import jax.numpy as jnp
def f(*args):
    return args[0]
jax.pmap(f)(jnp.ones(4), [jnp.ones(4), jnp.ones(3)])
)PY");
  CHECK(e.kind == "InputSplitError");
  std::string all;
  for (const auto& d : e.details) all += d + "\n";
  CHECK_THAT(all, Catch::Contains("* one axis had size 3: axis 0 of argument args[1][1] of type float32[3]"));
}

TEST_CASE("python::distributed: initialize checks the run it is in", "[python][distributed]") {
  // One process: a plain call and one that matches are fine, and the device
  // count may still be set afterwards (no runtime was started).
  auto ok = run(R"PY(
import jax
jax.distributed.initialize()
print(jax.distributed.is_initialized())
jax.config.update('jax_num_cpu_devices', 2)
print(jax.process_index(), jax.process_count())
)PY");
  CHECK(ok.out == "True\n0 1\n");
  auto same = run("import jax\njax.distributed.initialize(num_processes=1, process_id=0)\nprint('joined')\n");
  CHECK(same.out == "joined\n");

  Report r = run_error<ProgramError>(
      "import jax\njax.distributed.initialize(coordinator_address='10.0.0.1:1234', num_processes=2, process_id=0)\n");
  CHECK(r.kind == "RuntimeError");
  CHECK(r.message == "jax.distributed.initialize(num_processes=2) but this run has 1 process");
  CHECK(r.hint ==
        "start the run with spmd run --num-processes 2 (or a processes=2 header): spmd starts and connects the "
        "processes itself");
  CHECK(r.where.line == 2);

  r = run_error<ProgramError>("import jax\njax.distributed.initialize()\njax.distributed.initialize()\n");
  CHECK(r.message == "jax.distributed.initialize should only be called once.");
  CHECK(r.where.line == 3);
}

TEST_CASE("python::pmap: ppermute pairs and axis_index_groups outside the axis are ValueErrors while tracing",
          "[python][pmap][collectives][errors]") {
  // Issue 19, finding 19: indices past 32 bits were truncated ((1, 2**32 + 2) acted as (1, 2)).
  Report r = run_error<InvalidArgument>(
      "import jax, jax.numpy as jnp\nfrom jax import lax\n"
      "f = jax.pmap(lambda x: lax.ppermute(x, 'i', [(1, 4294967298)]), axis_name='i')\nf(jnp.arange(4.0))\n");
  CHECK(r.kind == "ValueError");
  CHECK(r.message == "ppermute: the permutation names index 4294967298, but the axis 'i' has size 4");
  CHECK(r.hint == "indices along the axis run from 0 to 3 (what lax.axis_index returns)");
  CHECK(r.where.line == 3);
  r = run_error<InvalidArgument>(
      "import jax, jax.numpy as jnp\nfrom jax import lax\n"
      "f = jax.pmap(lambda x: lax.psum(x, 'i', axis_index_groups=[[0, -1], [2, 3]]), axis_name='i')\n"
      "f(jnp.arange(4.0))\n");
  CHECK(r.message == "psum: axis_index_groups names index -1, but the axis 'i' has size 4");
}
