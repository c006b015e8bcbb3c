// The two code examples of the pmap debugging guide (shared/seeds), verbatim:
// their bugs must be reported the way JAX reports them, and the fixed
// programs must print the true values.

#include "frontend_test_util.h"

using namespace spmd;
using spmd::python::testing::run;
using spmd::python::testing::run_error;

namespace {

// Guide example 1, verbatim (including trailing spaces): `lax` is used
// without being imported.
const char* kExample1 = R"PY(import jax
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
)PY";

// Guide example 2, verbatim: a Python `if` on lax.axis_index inside pmap.
const char* kExample2 = R"PY(import jax
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
)PY";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  std::size_t i = s.find(from);
  REQUIRE(i != std::string::npos);
  return s.replace(i, from.size(), to);
}

}  // namespace

TEST_CASE("guide example 1: lax used without import is a NameError inside my_func", "[python][guide]") {
  std::string out;
  Report r = run_error<ProgramError>(kExample1, 4, &out);
  CHECK(out == "分片数据形状: (4, 10)\n复制数据形状: ()\n");
  CHECK(r.kind == "NameError");
  CHECK(r.message == "name 'lax' is not defined");
  CHECK(r.where.line == 16);
  CHECK(r.where.column == 20);
  CHECK(r.source_line == "    return x * y + lax.axis_index('batch') # 使用设备 ID");
  CHECK(r.hint == "add `from jax import lax` at the top of the program");
  CHECK(r.device == -1);  // raised while pmap traces my_func, before any device runs, as in JAX
  REQUIRE(r.details.size() == 8);
  CHECK(r.details[0] == "Traceback (most recent call last):");
  CHECK(r.details[1] == "  File \"t.py\", line 27, in <module>");
  CHECK(r.details[2] == "    output = pmapped_func(sharded_data, replicated_data)");
  CHECK(r.details[4] == "  File \"t.py\", line 16, in my_func");
  CHECK(r.details[7] == "NameError: name 'lax' is not defined");
}

TEST_CASE("guide example 1 fixed: prints the shapes", "[python][guide]") {
  std::string fixed = replace(kExample1, "from jax import pmap\n", "from jax import pmap, lax\n");
  auto r = run(fixed, 4);
  CHECK(r.out == "分片数据形状: (4, 10)\n复制数据形状: ()\n输出形状: (4, 10)\n");
  // and the values are x * 5 + device index
  auto v = run(fixed + "print(output[:, :3])\nprint(output.dtype)\n", 4);
  CHECK(v.out ==
        "分片数据形状: (4, 10)\n复制数据形状: ()\n输出形状: (4, 10)\n"
        "[[  0.   5.  10.]\n [ 51.  56.  61.]\n [102. 107. 112.]\n [153. 158. 163.]]\n"
        "float32\n");
}

TEST_CASE("guide example 2: Python if on axis_index is a TracerBoolConversionError", "[python][guide]") {
  Report r = run_error<ProgramError>(kExample2, 2);
  CHECK(r.kind == "TracerBoolConversionError");
  CHECK_THAT(r.message, Catch::StartsWith("Attempted boolean conversion of traced array with shape bool[].\nThe error "
                                          "occurred while tracing the function func_with_debug_print at t.py:5 for "
                                          "pmap."));
  CHECK(r.where.line == 8);
  CHECK(r.where.column == 8);
  CHECK(r.source_line == "    if lax.axis_index('data_axis') == 0:");
  CHECK_THAT(r.hint, Catch::Contains("lax.cond"));
  CHECK_THAT(r.hint, Catch::Contains("jnp.where"));
  CHECK(r.device == -1);  // a trace-time error, as in JAX
}

TEST_CASE("guide example 2 fixed with lax.cond: true psum values on both devices", "[python][guide]") {
  std::string fixed = replace(kExample2,
                              "    if lax.axis_index('data_axis') == 0:\n"
                              "        jax.debug.print(\"设备 0 中间值: {val}\", val=intermediate)\n",
                              "    jax.lax.cond(lax.axis_index('data_axis') == 0,\n"
                              "                 lambda: jax.debug.print(\"设备 0 中间值: {val}\", val=intermediate),\n"
                              "                 lambda: None)\n");
  auto r = run(fixed + "print(output)\n", 2);
  CHECK(r.out ==
        "[device 0] 设备 0 中间值: [0 2 4]\n"
        "[device 0] 设备 0 psum 后结果: [ 6 10 14]\n"
        "[device 1] 设备 1 psum 后结果: [ 6 10 14]\n"
        "[[ 6 10 14]\n [ 6 10 14]]\n");
  CHECK(r.err.empty());
}

TEST_CASE("guide example 2 fixed by printing unconditionally", "[python][guide]") {
  std::string fixed = replace(kExample2,
                              "    if lax.axis_index('data_axis') == 0:\n"
                              "        jax.debug.print(\"设备 0 中间值: {val}\", val=intermediate)\n",
                              "    jax.debug.print(\"中间值: {val}\", val=intermediate)\n");
  auto r = run(fixed, 2);
  CHECK(r.out ==
        "[device 0] 中间值: [0 2 4]\n"
        "[device 1] 中间值: [ 6  8 10]\n"
        "[device 0] 设备 0 psum 后结果: [ 6 10 14]\n"
        "[device 1] 设备 1 psum 后结果: [ 6 10 14]\n");
}
