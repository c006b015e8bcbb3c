# spmd: devices=4 processes=2 expect=deadlock expect-line=23
# spmd: expect-message=rank 1 finished after 1 collective
# A multi-host bug that one process cannot show: on process 1 the step skips
# its second psum. Alone (--num-processes 1) every device reaches both psums
# and the result is right. As two processes, the way the program is deployed
# on two hosts (the header asks for two; `spmd run` starts both and marks
# their output [process r]), process 1 returns after one collective while
# process 0 waits at the second: on GPUs both hang inside NCCL; spmdsim
# reports a deadlock across processes at line 23, naming rank 1 "finished
# after 1 collective" (exit code 3).
import jax
import jax.numpy as jnp
from jax import lax

jax.distributed.initialize()  # spmd run has started and connected the processes


def step(x):
    y = lax.psum(x, 'i')
    if jax.process_index() == 1:
        # host-dependent control flow: only legal if every process agrees
        return y
    return lax.psum(y, 'i')


out = jax.pmap(step, axis_name='i')(jnp.arange(4.0))
print(jax.process_index(), jax.process_count(), out)
