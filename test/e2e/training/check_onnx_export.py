#!/usr/bin/env python3
"""Checks a model written by `--export-onnx` against independent references.

usage: check_onnx_export.py ORIGINAL.onnx EXPORTED.onnx SAVED.safetensors
                            METRICS.jsonl X.npy LABELS.npy [--external]

- the exported file passes onnx.checker and has the original's graph (nodes,
  inputs, outputs, opsets) unchanged;
- every initializer that lmc trained holds exactly the bytes `--save` wrote,
  every other one is the original's, none refers to external data (with
  --external: each trained one refers to EXPORTED.onnx.data, at a 4 KiB
  aligned offset, and the loaded values are checked as above);
- the ONNX project's reference evaluator (onnx.reference), run on the
  exported model over the eval set, gives the cross-entropy and accuracy
  that lmc's own forward pass reported for the same data.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reference"))
import safetensors_np  # noqa: E402


def main():
    args = sys.argv[1:]
    external = "--external" in args
    if external:
        args.remove("--external")
    original_path, exported_path, saved_path, metrics_path, x_path, labels_path = args
    if external:
        # Before onnx.load resolves them: every trained initializer refers
        # to EXPORTED.data, page-aligned.
        raw = onnx.load(exported_path, load_external_data=False)
        saved_names = set(safetensors_np.load(saved_path))
        for t in raw.graph.initializer:
            if t.name not in saved_names:
                continue
            info = {e.key: e.value for e in t.external_data}
            assert t.data_location == onnx.TensorProto.EXTERNAL, t.name
            assert info["location"] == os.path.basename(exported_path) + ".data", info
            assert int(info["offset"]) % 4096 == 0, info
    original, exported = onnx.load(original_path), onnx.load(exported_path)
    onnx.checker.check_model(exported)

    def graph_shape(model):
        g = model.graph
        return ([n.SerializeToString() for n in g.node],
                [i.SerializeToString() for i in g.input],
                [o.SerializeToString() for o in g.output],
                [o.SerializeToString() for o in model.opset_import])
    assert graph_shape(original) == graph_shape(exported), "graph changed"

    assert all(t.data_location != onnx.TensorProto.EXTERNAL
               for t in exported.graph.initializer), "external data left"
    saved = safetensors_np.load(saved_path)
    before = {t.name: numpy_helper.to_array(t) for t in original.graph.initializer}
    after = {t.name: numpy_helper.to_array(t) for t in exported.graph.initializer}
    assert set(before) == set(after), (set(before) ^ set(after))
    assert saved and set(saved) <= set(after), set(saved) - set(after)
    for name, value in after.items():
        want = saved.get(name, before[name])
        assert value.dtype == want.dtype and value.shape == want.shape, name
        assert value.tobytes() == want.tobytes(), f"initializer {name} differs"
    changed = [n for n in saved if saved[n].tobytes() != before[n].tobytes()]
    assert changed, "training changed no initializer"

    x, labels = np.load(x_path), np.load(labels_path)
    (logits,) = ReferenceEvaluator(exported).run(None, {exported.graph.input[0].name: x})
    z = logits.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    loss = np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(labels)), labels])
    accuracy = np.mean(np.argmax(logits, axis=1) == labels)
    report = [json.loads(l) for l in open(metrics_path) if "eval_loss" in l][-1]
    assert abs(report["eval_loss"] - loss) <= 1e-5 * loss, (report, loss)
    assert abs(report["eval_accuracy"] - accuracy) < 1e-6, (report, accuracy)
    print(f"exported model: {len(changed)} trained initializers; reference "
          f"evaluator loss {loss:.6f} (lmc {report['eval_loss']:.6f}), "
          f"accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
