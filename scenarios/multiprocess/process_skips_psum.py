# spmd: devices=4 expect=ok
# spmd: expect-stdout: 0 1 [24. 24. 24. 24.]
# A multi-host bug that one process cannot show: on process 1 the step skips
# its second psum. Run alone (as `spmd test` does) every device reaches both
# psums and the result is right. Run as two processes, the way the program is
# deployed on two hosts:
#
#   spmd run scenarios/multiprocess/process_skips_psum.py --num-processes 2
#
# process 1 returns after one collective while process 0 waits at the second:
# on GPUs both hang inside NCCL; spmdsim reports a deadlock across processes
# at line 23 naming rank 1 "finished after 1 collective" (exit code 3).
import jax
import jax.numpy as jnp
from jax import lax


def step(x):
    y = lax.psum(x, 'i')
    if jax.process_index() == 1:
        # host-dependent control flow: only legal if every process agrees
        return y
    return lax.psum(y, 'i')


out = jax.pmap(step, axis_name='i')(jnp.arange(4.0))
print(jax.process_index(), jax.process_count(), out)
