"""Checks the initial values lmc generated for Inputs/init.lmc against the
distributions torch.nn.init documents (sample mean, std and bounds).

usage: check_init.py IMPORTED.mlir
"""
import math
import re
import sys

import numpy as np

text = open(sys.argv[1]).read()
values = {}
for m in re.finditer(r'lmc\.init = dense<(.*?)> : tensor<([0-9x]+)xf32>, '
                     r'lmc\.param = "(\w+)"', text):
    data, shape, name = m.groups()
    flat = [float(v) for v in re.findall(r'[-+0-9.eE]+', data)]
    dims = [int(d) for d in shape.split("x")]
    values[name] = np.array(flat * (np.prod(dims) // len(flat))).reshape(dims)


def check(name, mean, std, low=-math.inf, high=math.inf):
    v = values[name]
    se = std / math.sqrt(v.size)
    assert abs(v.mean() - mean) < 5 * se + 1e-12, (name, v.mean(), mean)
    assert abs(v.std() - std) < 0.03 * std, (name, v.std(), std)
    assert v.min() >= low and v.max() <= high, (name, v.min(), v.max())
    print(f"{name}: mean {v.mean():.4g} std {v.std():.4g} ok")


fan_in, fan_out = 100, 200
check("n", 1.0, 0.02)
check("u", 1.0, 8 / math.sqrt(12), -3, 5)
bound = 2 * math.sqrt(6 / (fan_in + fan_out))
check("xu", 0.0, bound / math.sqrt(3), -bound, bound)
check("xn", 0.0, math.sqrt(2 / (fan_in + fan_out)))
bound = math.sqrt(2 / (1 + 5)) * math.sqrt(3 / fan_in)
check("ku", 0.0, bound / math.sqrt(3), -bound, bound)
check("kn", 0.0, math.sqrt(2) / math.sqrt(20 * 2 * 5))
assert (values["c"] == -1.5).all()
print("c: constant ok")
