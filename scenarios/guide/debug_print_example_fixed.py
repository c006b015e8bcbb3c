# spmd: devices=2 expect=ok
# spmd: expect-stdout: [device 0] 设备 0 中间值: [0 2 4]
# spmd: expect-stdout: [device 0] 设备 0 psum 后结果: [ 6 10 14]
# spmd: expect-stdout: [device 1] 设备 1 psum 后结果: [ 6 10 14]
# The guide's jax.debug.print example with its Python `if` replaced by
# lax.cond. Note the true psum result: [ 6 10 14] on both devices
# ([0 2 4] + [6 8 10]); the guide's comment showing [ 6  8 10] is wrong.
import jax
import jax.numpy as jnp
from jax import pmap, lax

def func_with_debug_print(x):
    intermediate = x * 2
    # 仅从设备 0 打印中间值
    lax.cond(lax.axis_index('data_axis') == 0,
             lambda v: jax.debug.print("设备 0 中间值: {val}", val=v),
             lambda v: None,
             intermediate)
    # 集合操作
    result = lax.psum(intermediate, axis_name='data_axis') 
    jax.debug.print("设备 {id} psum 后结果: {res}", id=lax.axis_index('data_axis'), res=result)
    return result

# 假设有 2 个设备
data = jnp.arange(2 * 3).reshape((2, 3)) 
pmapped_func = pmap(func_with_debug_print, axis_name='data_axis')

# 执行时，你将看到带标签的打印输出
output = pmapped_func(data) 
# 输出可能显示：
# 设备 0 中间值: [0 2 4]
# 设备 0 psum 后结果: [ 6  8 10]
# 设备 1 psum 后结果: [ 6  8 10] 
