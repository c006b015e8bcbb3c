# spmd: devices=4 expect=error:AxisNameError expect-line=30
# spmd: expect-message=did you mean 'batch'?
# A script configured with argparse and a dataclass: the axis name lives in the
# config ("batch"), but the loss averages over a hard-coded "batches". JAX fails
# while tracing ("unbound axis name"); spmdsim names the bound axis closest to
# the typo and points at the collective.
import argparse
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@dataclass(frozen=True)
class Config:
    axis: str = "batch"
    width: int = 8


def parse(argv):
    p = argparse.ArgumentParser(description="toy data-parallel loss")
    p.add_argument("--width", type=int, default=Config.width)
    return Config(width=p.parse_args(argv).width)


def loss(w, x):
    per_device = jnp.mean((x @ w) ** 2)
    return lax.pmean(per_device, "batches")


cfg = parse([])
w = jnp.ones(cfg.width) / cfg.width
x = np.arange(4 * 2 * cfg.width, dtype=np.float32).reshape(4, 2, cfg.width)
print(jax.pmap(loss, axis_name=cfg.axis, in_axes=(None, 0))(w, x))
