"""Small models of the families users train, built by their own libraries
(transformers, torchvision; random weights, dropout 0) and exported as a
PyTorch user exports them, with PyTorch's own AdamW trajectory on the same
batches as the oracle.

    python3 make_families.py [NAME...]   # needs torch 2.x, transformers,
                                         # torchvision, onnx, onnxscript,
                                         # peft

For each model NAME it writes, next to this script:

  NAME.onnx            torch.onnx.export(..., dynamo=True, optimize=False)
  NAME-optimized.onnx  the default export (dynamo=True, optimize=True),
                       for OPTIMIZED_KEPT only
  NAME-legacy.onnx     the legacy exporter (dynamo=False, training mode),
                       where it can export the model at all
  NAME-x.npy, NAME-y.npy   STEPS batches of BATCH rows (inputs, labels)
  NAME-adamw5.safetensors  the parameters and BatchNorm running statistics
                       after the STEPS steps, under the export's names
                       (for LORA models: the adapters, PEFT's initial ones
                       in NAME-lora-init.safetensors; NAME-peft/, what
                       PeftModel.save_pretrained writes of the trained ones;
                       NAME-merged.safetensors, merge_and_unload's model)
and references.json: per model the input's name, the batch, the losses of
STEPS steps of torch.optim.AdamW(lr=1e-3) (weight decay 0.01, PyTorch's
default) computed in float64 from the float32 initial weights, the loss
(cross-entropy of the logits, labels flattened), and which exports exist.

CI needs none of these libraries: the outputs are checked in.
"""
import copy
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import safetensors_np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5
LR = 1e-3
WEIGHT_DECAY = 0.01


class Logits(torch.nn.Module):
    """What a user exports: the logits of the input (lmc adds the loss)."""

    def __init__(self, model, hf):
        super().__init__()
        self.m = model
        self.hf = hf

    def forward(self, x):
        return self.m(x).logits if self.hf else self.m(x)


def decoder(config_class, model_class, **extra):
    def build():
        config = config_class(vocab_size=96, hidden_size=32,
                              intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_key_value_heads=2,
                              max_position_embeddings=64, **extra)
        return model_class(config), True
    return build


def encoder(config_class, model_class, **extra):
    def build():
        dropout = {"hidden_dropout_prob": 0.0,
                   "attention_probs_dropout_prob": 0.0, **extra}
        config = config_class(vocab_size=96, hidden_size=32,
                              intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=4, num_labels=3,
                              max_position_embeddings=64, **dropout)
        return model_class(config), True
    return build


def llama():
    from transformers import LlamaConfig, LlamaForCausalLM
    return decoder(LlamaConfig, LlamaForCausalLM)()


def qwen2():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    return decoder(Qwen2Config, Qwen2ForCausalLM, tie_word_embeddings=True)()


def qwen3():
    from transformers import Qwen3Config, Qwen3ForCausalLM
    return decoder(Qwen3Config, Qwen3ForCausalLM, head_dim=8,
                   tie_word_embeddings=True)()


def mistral():
    from transformers import MistralConfig, MistralForCausalLM
    return decoder(MistralConfig, MistralForCausalLM, sliding_window=4)()


def phi3():
    from transformers import Phi3Config, Phi3ForCausalLM
    return decoder(Phi3Config, Phi3ForCausalLM, partial_rotary_factor=0.5,
                   pad_token_id=0)()


def gemma():
    from transformers import GemmaConfig, GemmaForCausalLM
    return decoder(GemmaConfig, GemmaForCausalLM, head_dim=8)()


def gemma2():
    from transformers import Gemma2Config, Gemma2ForCausalLM
    return decoder(Gemma2Config, Gemma2ForCausalLM, head_dim=8,
                   sliding_window=4)()


def gpt_neox():
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM
    config = GPTNeoXConfig(vocab_size=96, hidden_size=32,
                           intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, max_position_embeddings=64,
                           hidden_dropout=0.0, attention_dropout=0.0)
    return GPTNeoXForCausalLM(config), True


def falcon():
    from transformers import FalconConfig, FalconForCausalLM
    config = FalconConfig(vocab_size=96, hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=4, num_kv_heads=2,
                          new_decoder_architecture=True, hidden_dropout=0.0,
                          attention_dropout=0.0)
    return FalconForCausalLM(config), True


def bert_dropout():
    # The library's default dropout (0.1 after embeddings, attention
    # probabilities and every block): PyTorch's random draws cannot be
    # matched, its evaluation can.
    from transformers import BertConfig, BertForSequenceClassification
    return encoder(BertConfig, BertForSequenceClassification,
                   hidden_dropout_prob=0.1,
                   attention_probs_dropout_prob=0.1)()


def opt():
    from transformers import OPTConfig, OPTForCausalLM
    config = OPTConfig(vocab_size=96, hidden_size=32, ffn_dim=64,
                       num_hidden_layers=2, num_attention_heads=4,
                       max_position_embeddings=64, word_embed_proj_dim=32,
                       dropout=0.0, attention_dropout=0.0)
    return OPTForCausalLM(config), True


def bert():
    from transformers import BertConfig, BertForSequenceClassification
    return encoder(BertConfig, BertForSequenceClassification)()


def roberta():
    from transformers import RobertaConfig, RobertaForSequenceClassification
    return encoder(RobertaConfig, RobertaForSequenceClassification,
                   pad_token_id=1)()


def electra():
    from transformers import ElectraConfig, ElectraForSequenceClassification
    return encoder(ElectraConfig, ElectraForSequenceClassification,
                   embedding_size=16)()


def distilbert():
    from transformers import DistilBertConfig
    from transformers import DistilBertForSequenceClassification
    config = DistilBertConfig(vocab_size=96, dim=32, hidden_dim=64,
                              n_layers=2, n_heads=4, num_labels=3,
                              max_position_embeddings=64, dropout=0.0,
                              attention_dropout=0.0,
                              seq_classif_dropout=0.0)
    return DistilBertForSequenceClassification(config), True


def resnet():
    from transformers import ResNetConfig, ResNetForImageClassification
    config = ResNetConfig(num_channels=3, embedding_size=8,
                          hidden_sizes=[8, 16], depths=[1, 1],
                          layer_type="basic", num_labels=5)
    return ResNetForImageClassification(config), True


def vit():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=16, patch_size=4, num_layers=2,
                             num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=5), False


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    return ConvNeXt([CNBlockConfig(8, 16, 1), CNBlockConfig(16, None, 1)],
                    num_classes=5), False


def swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[2, 2], embed_dim=16, depths=[1, 1],
                           num_heads=[2, 2], window_size=[2, 2],
                           num_classes=5, stochastic_depth_prob=0.0), False


def dinov2():
    from transformers import Dinov2Config, Dinov2ForImageClassification
    # Position embeddings made for 12 x 12 images (3 x 3 patches), trained
    # on 16 x 16 ones: interpolate_pos_encoding resizes them bicubically to
    # 4 x 4 in every step (ONNX Resize, cubic, trained through).
    config = Dinov2Config(hidden_size=32, num_hidden_layers=2,
                          num_attention_heads=2, mlp_ratio=2, image_size=12,
                          patch_size=4, num_labels=5, hidden_dropout_prob=0.0,
                          attention_probs_dropout_prob=0.0,
                          drop_path_rate=0.0)
    return Dinov2ForImageClassification(config), True


# name: (builder, input kind, batch)
MODELS = {
    "llama": (llama, "tokens", 2),
    "qwen2": (qwen2, "tokens", 2),
    "qwen3": (qwen3, "tokens", 2),
    "mistral": (mistral, "tokens", 2),
    "phi3": (phi3, "tokens", 2),
    "gemma": (gemma, "tokens", 2),
    "gemma2": (gemma2, "tokens", 2),
    "gpt_neox": (gpt_neox, "tokens", 2),
    "falcon": (falcon, "tokens", 2),
    "opt": (opt, "tokens", 2),
    "llama_sft": (llama, "sft", 2),
    "llama_lora": (llama, "sft", 2),
    "qwen2_lora": (qwen2, "tokens", 2),
    "llama_lora_bf16": (llama, "sft", 2),
    "electra": (electra, "sequence", 4),
    "bert": (bert, "sequence", 4),
    "roberta": (roberta, "padded", 4),
    "distilbert": (distilbert, "sequence", 4),
    "bert_dropout": (bert_dropout, "sequence", 4),
    "resnet": (resnet, "image", 4),
    "vit": (vit, "image", 4),
    "convnext": (convnext, "image", 4),
    "swin": (swin, "image", 4),
    "dinov2": (dinov2, "image", 4),
}
SEQ = 8
PAD_ID = 1
# Models trained from another's export (same weights, other data).
EXPORT_OF = {"llama_sft": "llama", "llama_lora": "llama",
             "qwen2_lora": "qwen2", "llama_lora_bf16": "llama"}
# Models fine-tuned with PEFT's LoRA (peft.LoraConfig's arguments, dropout
# 0): the trajectory of the adapters alone, from PEFT's initial values
# (NAME-lora-init.safetensors; lmc's own A values come from another
# generator).
LORA = {
    "llama_lora": {"r": 4, "lora_alpha": 8,
                   "target_modules": ["q_proj", "v_proj"]},
    "qwen2_lora": {"r": 2, "lora_alpha": 4, "target_modules": "all-linear",
                   "use_rslora": True},
    "llama_lora_bf16": {"r": 4, "lora_alpha": 8,
                        "target_modules": ["q_proj", "v_proj"]},
}
# LoRA with the base held in bf16 (lmc --base-precision bf16): PEFT's steps
# on the base rounded to bf16 (to nearest even, torch's .to) and computed
# in float64 from there.
BF16_BASE = {"llama_lora_bf16"}
# Models with dropout: no trajectory (PyTorch's random draws are its own),
# the loss of PyTorch's eval mode on the first batch instead.
EVAL_ONLY = {"bert_dropout"}


def make_data(kind, batch, rng):
    rows = STEPS * batch
    if kind == "image":
        x = rng.standard_normal((rows, 3, 16, 16)).astype(np.float32)
        y = rng.integers(0, 5, size=(rows,), dtype=np.int64)
    elif kind in ("sequence", "padded"):
        x = rng.integers(2, 96, size=(rows, SEQ), dtype=np.int64)
        y = rng.integers(0, 3, size=(rows,), dtype=np.int64)
        if kind == "padded":
            # Rows end in 0 to 3 padding tokens (RoBERTa's pad_token_id 1):
            # its position ids count only the other tokens, and its padding
            # embedding rows are not trained.
            for row, pads in enumerate(rng.integers(0, 4, size=rows)):
                x[row, SEQ - pads:] = PAD_ID
    else:
        x = rng.integers(0, 96, size=(rows, SEQ), dtype=np.int64)
        y = rng.integers(0, 96, size=(rows,  SEQ), dtype=np.int64)
        if kind == "sft":
            # Supervised fine-tuning's labels: the prompt (the first 2 to 5
            # tokens of a row) is -100, PyTorch's and HF's ignore_index,
            # and so is one whole row.
            for row, prompt in enumerate(rng.integers(2, 6, size=rows)):
                y[row, :prompt] = -100
            y[3] = -100
    return x, y


def perturb(model):
    """Weights as a pretrained model has them: no two tensors equal (fresh
    norms are all ones, biases zeros; the default exporter merges equal
    initializers, which must be caught, not hidden by the test)."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.02 * torch.randn_like(p))


def trajectory(model, x, y, batch):
    """STEPS AdamW steps in float64 from the float32 weights; the loss of
    each step before its update."""
    model = model.double().train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR,
                            weight_decay=WEIGHT_DECAY)
    losses = []
    for step in range(STEPS):
        xb = torch.from_numpy(x[step * batch:(step + 1) * batch])
        if xb.dtype == torch.float32:
            xb = xb.double()
        yb = torch.from_numpy(y[step * batch:(step + 1) * batch])
        logits = model(xb)
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), yb.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


def with_lora(model, name):
    """The model with PEFT's adapters (only they train); `adapter_names`
    maps PEFT's state_dict names of the adapters to lmc's (the export's
    module name and .lora_A.weight / .lora_B.weight)."""
    from peft import LoraConfig, get_peft_model
    model.m = get_peft_model(model.m, LoraConfig(lora_dropout=0.0,
                                                 **LORA[name]))
    names = {}
    for key, p in model.named_parameters():
        if p.requires_grad:
            assert ".lora_" in key, key
            names[key] = ("m." + key[len("m.base_model.model."):]
                          .replace(".default.", "."))
    return model, names


def save_adapters(path, model, names):
    state = model.state_dict()
    safetensors_np.save(path, {names[k]: state[k].float().numpy()
                               for k in sorted(names)})


def save_state(path, onnx_path, state):
    """The trained tensors under the export's initializer names (those that
    are in PyTorch's state_dict: its parameters and persistent buffers)."""
    import onnx
    names = {i.name for i in onnx.load(onnx_path).graph.initializer
             if i.data_type == onnx.TensorProto.FLOAT}
    safetensors_np.save(path, {name: state[name].float().numpy()
                               for name in sorted(names) if name in state})


# The node metadata lmc reads (the FX node, the rewrite rules of the
# exporter's optimizer) and the module scopes; the rest (stack traces with
# this machine's paths, class hierarchies) is dropped to keep the files
# small. Weights are stored inline.
KEPT_METADATA = {"pkg.torch.onnx.fx_node", "pkg.torch.onnx.name_scopes",
                 "pkg.onnxscript.rewriter.rule_name"}
# The default (optimize=True) export is kept for these only: the tests
# check that lmc refuses it (Falcon's head reads a folded copy of its
# weight, which is still an initializer).
OPTIMIZED_KEPT = {"llama", "resnet", "bert", "falcon"}


def slim(path):
    import onnx
    model = onnx.load(path)
    for node in model.graph.node:
        kept = [p for p in node.metadata_props if p.key in KEPT_METADATA]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")
    onnx.save(model, path)


def export(model, example, path, **kwargs):
    # A copy: the legacy exporter runs the model, which updates BatchNorm's
    # running statistics in place.
    model = copy.deepcopy(model)
    try:
        torch.onnx.export(model, (example,), path, input_names=["x"],
                          output_names=["logits"], **kwargs)
        slim(path)
        return True
    except Exception as e:  # the exporter's own failures are reported
        print(f"  {os.path.basename(path)}: exporter failed: "
              f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        if os.path.exists(path):
            os.remove(path)
        return False


def main():
    names = sys.argv[1:] or list(MODELS)
    refs_path = os.path.join(HERE, "references.json")
    refs = json.load(open(refs_path)) if os.path.exists(refs_path) else {}
    for name in names:
        build, kind, batch = MODELS[name]
        print(name)
        torch.manual_seed(0)
        inner, hf = build()
        perturb(inner)
        model = Logits(inner, hf).train()
        rng = np.random.default_rng(0)
        x, y = make_data(kind, batch, rng)
        np.save(os.path.join(HERE, f"{name}-x.npy"), x)
        np.save(os.path.join(HERE, f"{name}-y.npy"), y)
        example = torch.from_numpy(x[:batch])
        base = os.path.join(HERE, name)
        if name in BF16_BASE:
            with torch.no_grad():
                for p in model.parameters():
                    if p.dim() >= 2:
                        p.copy_(p.to(torch.bfloat16).to(p.dtype))
        if name in LORA:
            model, adapters = with_lora(model, name)
            save_adapters(base + "-lora-init.safetensors", model, adapters)
            losses, _ = trajectory(model, x, y, batch)
            save_adapters(base + f"-adamw{STEPS}.safetensors", model,
                          adapters)
            # PEFT's own files of the trained adapters (not for a bf16 base,
            # whose merge PEFT does in f32 here).
            if name not in BF16_BASE:
                # PEFT's merge_and_unload of the trained adapters, under the
                # export's names.
                merged = copy.deepcopy(model.m).float().merge_and_unload()
                save_state(base + "-merged.safetensors",
                           os.path.join(HERE, EXPORT_OF[name]) + ".onnx",
                           {"m." + k: v for k, v in merged.state_dict().items()})
                # What PEFT itself writes of the trained adapters (float32).
                peft_dir = base + "-peft"
                copy.deepcopy(model.m).float().save_pretrained(peft_dir)
                for extra in set(os.listdir(peft_dir)) - {
                        "adapter_config.json", "adapter_model.safetensors"}:
                    os.remove(os.path.join(peft_dir, extra))
            print(f"  losses {losses}")
            refs[name] = {"batch": batch, "input": "x",
                          "export_of": EXPORT_OF[name], "lora": LORA[name],
                          "losses": {"adamw": losses},
                          "params": sum(p.numel() for p in model.parameters()
                                        if p.requires_grad)}
            continue
        if name in EXPORT_OF:
            exported = os.path.join(HERE, EXPORT_OF[name])
            losses, state = trajectory(model, x, y, batch)
            save_state(base + f"-adamw{STEPS}.safetensors", exported + ".onnx",
                       state)
            print(f"  losses {losses}")
            refs[name] = {"batch": batch, "input": "x",
                          "export_of": EXPORT_OF[name],
                          "losses": {"adamw": losses},
                          "params": sum(p.numel() for p in model.parameters())}
            continue
        exports = {
            "dynamo": export(model, example, base + ".onnx", dynamo=True,
                             optimize=False),
            "optimized": name in OPTIMIZED_KEPT and export(
                model, example, base + "-optimized.onnx", dynamo=True),
            "legacy": export(model, example, base + "-legacy.onnx",
                             dynamo=False,
                             training=torch.onnx.TrainingMode.TRAINING,
                             do_constant_folding=False),
        }
        if name in EVAL_ONLY:
            evaluated = copy.deepcopy(model).eval()
            with torch.no_grad():
                logits = evaluated(torch.from_numpy(x[:batch]))
                loss = torch.nn.functional.cross_entropy(
                    logits, torch.from_numpy(y[:batch])).item()
            print(f"  eval loss {loss}")
            refs[name] = {"batch": batch, "input": "x", "exports": exports,
                          "eval_loss": loss}
            continue
        losses, state = trajectory(model, x, y, batch)
        if exports["dynamo"]:
            save_state(base + f"-adamw{STEPS}.safetensors", base + ".onnx",
                       state)
        print(f"  losses {losses}")
        refs[name] = {"batch": batch, "input": "x", "exports": exports,
                      "losses": {"adamw": losses},
                      "params": sum(p.numel() for p in model.parameters())}
    refs["_about"] = {"torch": torch.__version__, "steps": STEPS, "lr": LR,
                      "weight_decay": WEIGHT_DECAY,
                      "optimizer": "torch.optim.AdamW, float64"}
    try:
        import transformers
        import torchvision
        refs["_about"]["transformers"] = transformers.__version__
        refs["_about"]["torchvision"] = torchvision.__version__
    except ImportError:
        pass
    with open(refs_path, "w") as f:
        json.dump(refs, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
