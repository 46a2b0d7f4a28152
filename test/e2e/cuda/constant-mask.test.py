"""The first loss of constant-mask.onnxtxt on the first batch of 8, with
numpy: mean((where(keep, x @ w, -1) - t) ** 2), w and keep read from the
model's text; fails unless the logged first loss matches to 1e-6."""
import json
import math
import re
import sys

import numpy as np

model, x_path, t_path, metrics = sys.argv[1:]
text = open(model).read()


def initializer(name, dtype, shape):
    body = re.search(rf"\b{name} = \{{([^}}]*)\}}", text).group(1)
    return np.array([float(v) for v in body.split(",")], dtype).reshape(shape)


w = initializer("w", np.float32, (8, 8))
keep = initializer("keep", np.float64, (4, 8)) != 0
x = np.load(x_path)[:8].astype(np.float64)
t = np.load(t_path)[:8].astype(np.float64)
want = float(np.mean((np.where(keep, x @ w.astype(np.float64), -1.0) - t) ** 2))
got = next(json.loads(l)["loss"] for l in open(metrics) if '"loss"' in l)
if not (math.isfinite(got) and abs(got - want) <= 1e-6 * abs(want)):
    sys.exit(f"first loss {got}, numpy {want}")
print(f"first loss {got} matches numpy {want}")
