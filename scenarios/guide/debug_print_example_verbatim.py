# spmd: devices=2 expect=error:TracerBoolConversionError expect-line=13
# The guide's jax.debug.print example, verbatim. Its Python `if` on
# lax.axis_index(...) == 0 branches on a traced value: JAX raises
# TracerBoolConversionError there, and so does spmdsim, at that line.
# (guide/debug_print_example_fixed.py uses lax.cond instead.)
import jax
import jax.numpy as jnp
from jax import pmap, lax

def func_with_debug_print(x):
    intermediate = x * 2
    # 仅从设备 0 打印中间值
    if lax.axis_index('data_axis') == 0:
        jax.debug.print("设备 0 中间值: {val}", val=intermediate)
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
