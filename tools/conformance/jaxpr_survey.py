"""How many common jnp / lax calls jax.make_jaxpr prints as real JAX does
(issue 34): each case's jaxpr text under real JAX and under spmdsim's jax,
compared case by case; prints the cases that agree and those that differ
(with --diff, their diffs).

    build/venv/bin/python tools/conformance/jaxpr_survey.py --spmd-path SRC/python:BUILD/python [--diff] [CASE...]

Not a test: the conformance files under tests/conformance/ pin what agrees;
this shows what is left.
"""

import argparse
import difflib
import os
import subprocess
import sys

CASES = r'''
import jax, jax.numpy as jnp
from jax import lax
x = jnp.arange(12.0).reshape(3, 4) / 7; v = jnp.arange(4.0); i = jnp.arange(6, dtype=jnp.int32)
cases = {
 'sum': lambda: jnp.sum(x), 'max0': lambda: jnp.max(x, 0), 'min': lambda: jnp.min(x), 'prod': lambda: jnp.prod(x),
 'argmax': lambda: jnp.argmax(x, 1), 'argmin': lambda: jnp.argmin(x), 'any': lambda: jnp.any(x > 1),
 'all': lambda: jnp.all(x > 1), 'mean': lambda: jnp.mean(x), 'var': lambda: jnp.var(x), 'std': lambda: jnp.std(x, 0),
 'reshape': lambda: x.reshape(12), 'bcast': lambda: jnp.broadcast_to(v, (3, 4)), 'astype': lambda: x.astype(jnp.int32),
 'T': lambda: x.T, 'slice': lambda: x[1:, ::2], 'int': lambda: x[1], 'concat': lambda: jnp.concatenate([x, x]),
 'pad': lambda: jnp.pad(x, 1), 'cumsum': lambda: jnp.cumsum(x, 0), 'sort': lambda: jnp.sort(v), 'where': lambda: jnp.where(x > 2, x, 0.0),
 'clip': lambda: jnp.clip(x, 1, 2), 'exp': lambda: jnp.exp(x), 'tanh': lambda: jnp.tanh(x), 'relu': lambda: jax.nn.relu(x),
 'softmax': lambda: jax.nn.softmax(x), 'logsumexp': lambda: jax.nn.logsumexp(x), 'sigmoid': lambda: jax.nn.sigmoid(x),
 'gelu': lambda: jax.nn.gelu(x), 'norm': lambda: jnp.linalg.norm(x), 'maximum': lambda: jnp.maximum(x, 1.0),
 'abs': lambda: jnp.abs(x), 'sign': lambda: jnp.sign(x), 'floordiv': lambda: x // 2, 'mod': lambda: x % 2,
 'isnan': lambda: jnp.isnan(x), 'stack': lambda: jnp.stack([v, v]), 'split': lambda: jnp.split(x, 2, 1),
 'expand': lambda: jnp.expand_dims(x, 0), 'squeeze': lambda: jnp.squeeze(x[None]), 'flip': lambda: jnp.flip(x, 0),
 'eye': lambda: jnp.eye(3), 'arange': lambda: jnp.arange(5), 'zeros': lambda: jnp.zeros((2, 3)), 'full': lambda: jnp.full((2,), 3.0),
 'ones_like': lambda: jnp.ones_like(x), 'tile': lambda: jnp.tile(v, 2), 'repeat': lambda: jnp.repeat(v, 2),
 'diag': lambda: jnp.diag(x), 'triu': lambda: jnp.triu(x), 'einsum_sum': lambda: jnp.einsum('ij->j', x),
 'outer': lambda: jnp.outer(v, v), 'square': lambda: jnp.square(x), 'sqrt': lambda: jnp.sqrt(x), 'rsqrt': lambda: lax.rsqrt(x),
 'log1p': lambda: jnp.log1p(x), 'power': lambda: x ** 2.5, 'true_div': lambda: x / 3, 'neg': lambda: -x,
 'cond': lambda: lax.cond(x[0, 0] > 1, lambda a: a, lambda a: -a, x),
 'fori': lambda: lax.fori_loop(0, 3, lambda k, a: a * 2, x), 'scan': lambda: lax.scan(lambda c, a: (c + a, c), 0.0, v),
 'while': lambda: lax.while_loop(lambda a: a < 5, lambda a: a + 1, 0), 'stop_grad': lambda: lax.stop_gradient(x),
 'dyn_slice': lambda: lax.dynamic_slice(x, (i[0], 0), (2, 2)), 'take': lambda: jnp.take(v, i[:2]),
 'at_set': lambda: x.at[0].set(1.0), 'random': lambda: jax.random.normal(jax.random.key(0), (2,)),
 'argsort': lambda: jnp.argsort(v), 'cumprod': lambda: jnp.cumprod(v), 'mean_axis': lambda: jnp.mean(x, axis=1, keepdims=True),
 'matmul': lambda: x @ x.T, 'dot': lambda: jnp.dot(v, v), 'ravel': lambda: jnp.ravel(x), 'swapaxes': lambda: jnp.swapaxes(x, 0, 1),
 'moveaxis': lambda: jnp.moveaxis(x, 0, 1), 'one_hot': lambda: jax.nn.one_hot(i, 3), 'log_softmax': lambda: jax.nn.log_softmax(x),
 'silu': lambda: jax.nn.silu(x), 'minimum': lambda: jnp.minimum(x, v), 'sub_int': lambda: i - 1, 'mul_bool': lambda: (x > 1) * x,
}
import sys
only = sys.argv[1:] or list(cases)
for k in only:
    try:
        print('##', k); print(jax.make_jaxpr(cases[k])())
    except Exception as e:
        print('##', k, 'FAIL', type(e).__name__, str(e).splitlines()[0][:100])
'''


def texts(env):
    """{case: text} from running CASES in a child with `env`."""
    p = subprocess.run([sys.executable, '-c', CASES, *ARGS.case], env=env, capture_output=True, text=True, timeout=600)
    out, cur = {}, None
    for line in p.stdout.splitlines(keepends=True):
        if line.startswith('## '):
            cur = line[3:].split()[0]
            out[cur] = line
        elif cur:
            out[cur] += line
    return out


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--spmd-path', required=True, help="spmdsim's jax package and _spmd: SRC/python:BUILD/python")
    parser.add_argument('--diff', action='store_true', help='print the diff of each case that differs')
    parser.add_argument('case', nargs='*', help='only these cases')
    ARGS = parser.parse_args()
    jax_env = {**os.environ, 'PYTHONPATH': '', 'XLA_FLAGS': '--xla_force_host_platform_device_count=8'}
    spmd_env = {**os.environ, 'PYTHONPATH': ARGS.spmd_path}
    real, ours = texts(jax_env), texts(spmd_env)
    same = [k for k in real if real[k] == ours.get(k)]
    differ = [k for k in real if real[k] != ours.get(k)]
    print(f'agree ({len(same)} of {len(real)}):', ' '.join(same))
    print(f'differ ({len(differ)}):', ' '.join(differ))
    if ARGS.diff:
        for k in differ:
            sys.stdout.writelines(difflib.unified_diff(real[k].splitlines(True), ours.get(k, '').splitlines(True),
                                                       'real JAX', 'spmdsim', n=1))
