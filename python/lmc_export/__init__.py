"""Export a PyTorch model the way lmc trains it.

    import lmc_export
    lmc_export.export(model, (input_ids,), "model.onnx")
    lmc_export.export(model, (input_ids,), "model.onnx", labels=labels,
                      verify=True)        # lmc's first loss == PyTorch's

`export` is `torch.onnx.export(..., dynamo=True, optimize=False)` with the
model in training mode: the dynamo exporter records on every node which
initializers are parameters and buffers and how BatchNorm and embeddings
ran (docs/onnx-import.md, "PyTorch's dynamo exporter"), and without its
optimizer nothing is folded into unnamed constants or merged. Weights go to
external data next to the model (`model.onnx.data`). The user's side
only: lmc itself needs no Python.

With `verify=True` (and `labels`), the export is compiled with the `lmc`
on PATH (or `lmc_binary`), one step at learning rate 0 is run on the
example batch, and its loss is compared with PyTorch's cross-entropy of the
model's output (`mse` with `loss="mse"`); a difference above `rtol` raises
`VerificationError`.
"""
import json
import os
import subprocess
import tempfile

__all__ = ["export", "first_losses", "VerificationError"]


class VerificationError(RuntimeError):
    """lmc's first loss differs from PyTorch's."""


def _input_names(example_inputs, input_names):
    if input_names is not None:
        if len(input_names) != len(example_inputs):
            raise ValueError(f"{len(input_names)} input names for "
                             f"{len(example_inputs)} example inputs")
        return list(input_names)
    return ["x"] if len(example_inputs) == 1 else [
        f"x{i}" for i in range(len(example_inputs))]


def export(model, example_inputs, path, *, input_names=None,
           output_name="logits", labels=None, loss="cross_entropy",
           verify=False, rtol=1e-4, lmc_binary="lmc"):
    """Exports `model` (a torch.nn.Module) for training with lmc.

    `example_inputs`: a tuple of tensors whose shapes fix the batch (lmc's
    `--batch` rebinds it). Returns the path written.
    """
    import torch

    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    names = _input_names(example_inputs, input_names)
    was_training = model.training
    model.train()
    try:
        program = torch.onnx.export(model, example_inputs, dynamo=True,
                                    optimize=False, input_names=names,
                                    output_names=[output_name])
        program.save(path, external_data=True)
        if verify:
            if labels is None:
                raise ValueError("verify=True needs the labels of the "
                                 "example batch")
            first_losses(model, example_inputs, path, labels,
                         input_names=names, loss=loss, rtol=rtol,
                         lmc_binary=lmc_binary)
    finally:
        model.train(was_training)
    return path


def _torch_loss(model, example_inputs, labels, loss):
    import copy
    import torch
    # A copy: a training-mode forward updates BatchNorm's running
    # statistics, which the user's model must keep.
    model = copy.deepcopy(model).train()
    with torch.no_grad():
        out = model(*example_inputs)
        out = getattr(out, "logits", out)
        if loss == "mse":
            return torch.nn.functional.mse_loss(out, labels).item()
        return torch.nn.functional.cross_entropy(
            out.reshape(-1, out.shape[-1]), labels.reshape(-1)).item()


def first_losses(model, example_inputs, path, labels, *, input_names=None,
                 loss="cross_entropy", rtol=1e-4, lmc_binary="lmc"):
    """Compiles the export at `path` with lmc, runs one step at learning
    rate 0 on the example batch and returns (lmc's loss, PyTorch's); raises
    VerificationError when they differ by more than `rtol` relative."""
    import numpy as np
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    names = _input_names(example_inputs, input_names)
    want = _torch_loss(model, example_inputs, labels, loss)
    batch = example_inputs[0].shape[0]
    with tempfile.TemporaryDirectory() as work:
        exe = os.path.join(work, "train")
        subprocess.run([lmc_binary, path, "--batch", str(batch), "--loss",
                        loss, "-o", exe, "--quiet"], check=True)
        args = [exe, "--steps", "1", "--lr", "0", "--metrics",
                os.path.join(work, "metrics.jsonl")]
        for name, tensor in zip(names, example_inputs):
            np.save(os.path.join(work, name + ".npy"), tensor.numpy())
            args += ["--input", f"{name}={os.path.join(work, name)}.npy"]
        target = "targets" if loss == "mse" else "labels"
        np.save(os.path.join(work, "labels.npy"), labels.numpy())
        args += ["--input", f"{target}={os.path.join(work, 'labels.npy')}"]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        rows = [json.loads(line) for line in
                open(os.path.join(work, "metrics.jsonl")) if '"loss"' in line]
    got = rows[0]["loss"]
    if abs(got - want) > rtol * abs(want):
        raise VerificationError(f"lmc's first loss {got} differs from "
                                f"PyTorch's {want} by more than {rtol} "
                                "relative")
    return got, want
