# spmd: devices=4 expect=error:NameError expect-line=22 expect-message=from jax import lax
# spmd: expect-stdout: 分片数据形状: (4, 10)
# spmd: expect-stdout: 复制数据形状: ()
# The guide's first example, verbatim. It uses `lax` without importing it, so
# it fails with a NameError when pmap traces my_func. spmdsim names the line
# and suggests the missing import. (guide/shapes_example_fixed.py adds it.)
import jax
import jax.numpy as jnp
from jax import pmap

# 示例：假设我们有 4 个设备
num_devices = 4 # 实际使用中替换为 jax.local_device_count()

# 旨在跨 4 个设备分割的数据
sharded_data = jnp.arange(4 * 10).reshape((num_devices, 10)) 

# 旨在复制到所有设备上的数据
replicated_data = jnp.array(5.0) 

def my_func(x, y):
    # x 是分片的（每个设备的形状是 (10,)），y 是复制的（标量）
    return x * y + lax.axis_index('batch') # 使用设备 ID

pmapped_func = pmap(my_func, in_axes=(0, None), out_axes=0, axis_name='batch')

print("分片数据形状:", sharded_data.shape)
# 预期: (4, 10) - 检查第一维度是否与设备数量匹配
assert sharded_data.shape[0] == num_devices 

print("复制数据形状:", replicated_data.shape) 
# 预期: () 对于标量，或者轴 0 不与设备数量匹配的形状

output = pmapped_func(sharded_data, replicated_data)

print("输出形状:", output.shape)
# 预期: (4, 10) - 因为 out_axes=0 将每个设备的 (10,) 结果堆叠起来
