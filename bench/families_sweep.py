"""Beyond the families the tests pin: many more architectures as their own
libraries build them (tiny configurations, random weights, dropout 0),
exported by lmc_export (the dynamo exporter, optimize=False), compiled by
lmc and compared on the first loss with PyTorch's (lmc_export.first_losses,
learning rate 0). Prints one line per model: export / compile failure with
its first error line, or both losses and their relative difference.
Run through bench/families_sweep.sh.
"""
import os
import subprocess
import sys
import tempfile
import traceback

import torch

V, H, L, A = 96, 32, 2, 4  # vocabulary, width, layers, heads


def hf(config_name, model_name, **kw):
    def build():
        import transformers
        config = getattr(transformers, config_name)(**kw)
        return getattr(transformers, model_name)(config)
    return build


def tv(name, **kw):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(**kw)
    return build


DEC = dict(vocab_size=V, hidden_size=H, intermediate_size=2 * H,
           num_hidden_layers=L, num_attention_heads=A,
           max_position_embeddings=64)
ENC = dict(vocab_size=V, hidden_size=H, intermediate_size=2 * H,
           num_hidden_layers=L, num_attention_heads=A,
           max_position_embeddings=64, num_labels=3,
           hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
MODELS = {
    # decoders: tokens -> next-token logits
    "gpt2": ("tokens", hf("GPT2Config", "GPT2LMHeadModel", vocab_size=V,
                          n_embd=H, n_layer=L, n_head=A, n_positions=64,
                          resid_pdrop=0, embd_pdrop=0, attn_pdrop=0)),
    "gptj": ("tokens", hf("GPTJConfig", "GPTJForCausalLM", vocab_size=V,
                          n_embd=H, n_layer=L, n_head=A, n_positions=64,
                          rotary_dim=4, resid_pdrop=0, embd_pdrop=0,
                          attn_pdrop=0)),
    "codegen": ("tokens", hf("CodeGenConfig", "CodeGenForCausalLM",
                             vocab_size=V, n_embd=H, n_layer=L, n_head=A,
                             n_positions=64, rotary_dim=4, resid_pdrop=0,
                             embd_pdrop=0, attn_pdrop=0)),
    "bloom": ("tokens", hf("BloomConfig", "BloomForCausalLM", vocab_size=V,
                           hidden_size=H, n_layer=L, n_head=A,
                           hidden_dropout=0, attention_dropout=0)),
    "stablelm": ("tokens", hf("StableLmConfig", "StableLmForCausalLM", **DEC)),
    "phi": ("tokens", hf("PhiConfig", "PhiForCausalLM", **DEC)),
    "olmo": ("tokens", hf("OlmoConfig", "OlmoForCausalLM", **DEC)),
    "olmo2": ("tokens", hf("Olmo2Config", "Olmo2ForCausalLM", **DEC)),
    "granite": ("tokens", hf("GraniteConfig", "GraniteForCausalLM", **DEC)),
    "starcoder2": ("tokens", hf("Starcoder2Config", "Starcoder2ForCausalLM",
                                **DEC)),
    "cohere": ("tokens", hf("CohereConfig", "CohereForCausalLM", **DEC)),
    "gemma3": ("tokens", hf("Gemma3TextConfig", "Gemma3ForCausalLM",
                            head_dim=8, sliding_window=4, **DEC)),
    "mixtral": ("tokens", hf("MixtralConfig", "MixtralForCausalLM",
                             num_local_experts=4, num_experts_per_tok=2,
                             **DEC)),
    "qwen2_moe": ("tokens", hf("Qwen2MoeConfig", "Qwen2MoeForCausalLM",
                               num_experts=4, num_experts_per_tok=2,
                               moe_intermediate_size=H,
                               shared_expert_intermediate_size=H, **DEC)),
    "opt": ("tokens", hf("OPTConfig", "OPTForCausalLM", vocab_size=V,
                         hidden_size=H, ffn_dim=2 * H, num_hidden_layers=L,
                         num_attention_heads=A, word_embed_proj_dim=H,
                         max_position_embeddings=64, dropout=0,
                         attention_dropout=0)),
    # encoders: tokens -> 3 classes
    "xlm_roberta": ("sequence", hf("XLMRobertaConfig",
                                   "XLMRobertaForSequenceClassification",
                                   **ENC)),
    "albert": ("sequence", hf("AlbertConfig", "AlbertForSequenceClassification",
                              embedding_size=16, classifier_dropout_prob=0.0,
                              **ENC)),
    "mobilebert": ("sequence", hf("MobileBertConfig",
                                  "MobileBertForSequenceClassification",
                                  embedding_size=16, intra_bottleneck_size=16,
                                  true_hidden_size=16, **ENC)),
    "deberta_v2": ("sequence", hf("DebertaV2Config",
                                  "DebertaV2ForSequenceClassification",
                                  pooler_dropout=0.0, **ENC)),
    "modernbert": ("sequence", hf("ModernBertConfig",
                                  "ModernBertForSequenceClassification",
                                  vocab_size=V, hidden_size=H,
                                  intermediate_size=2 * H,
                                  num_hidden_layers=L, num_attention_heads=A,
                                  max_position_embeddings=64, num_labels=3,
                                  pad_token_id=0, bos_token_id=1,
                                  eos_token_id=2, cls_token_id=1,
                                  sep_token_id=2)),
    # with their libraries' default dropout (0.1): an evaluation step
    # computes PyTorch's eval mode
    "bert_dropout": ("sequence", hf("BertConfig",
                                    "BertForSequenceClassification",
                                    **{**ENC, "hidden_dropout_prob": 0.1,
                                       "attention_probs_dropout_prob": 0.1})),
    # vision: images -> 5 classes
    "dinov2": ("image", hf("Dinov2Config", "Dinov2ForImageClassification",
                           hidden_size=H, num_hidden_layers=L,
                           num_attention_heads=A, image_size=16,
                           patch_size=4, num_labels=5)),
    "deit": ("image", hf("DeiTConfig", "DeiTForImageClassification",
                         hidden_size=H, num_hidden_layers=L,
                         num_attention_heads=A, intermediate_size=2 * H,
                         image_size=16, patch_size=4, num_labels=5)),
    "beit": ("image", hf("BeitConfig", "BeitForImageClassification",
                         hidden_size=H, num_hidden_layers=L,
                         num_attention_heads=A, intermediate_size=2 * H,
                         image_size=16, patch_size=4, num_labels=5,
                         use_relative_position_bias=True)),
    "resnet50": ("image", tv("resnet50", num_classes=5)),
    "mobilenet_v3_small": ("image", tv("mobilenet_v3_small", num_classes=5)),
    "efficientnet_b0": ("image", tv("efficientnet_b0", num_classes=5,
                                    stochastic_depth_prob=0.0)),
    "densenet121": ("image", tv("densenet121", num_classes=5)),
    "regnet_y_400mf": ("image", tv("regnet_y_400mf", num_classes=5)),
    "vgg11_bn": ("image", tv("vgg11_bn", num_classes=5)),
    "shufflenet_v2": ("image", tv("shufflenet_v2_x0_5", num_classes=5)),
}


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, x):
        out = self.m(x)
        return getattr(out, "logits", out)


def data(kind):
    g = torch.Generator().manual_seed(0)
    if kind == "image":
        # 64 x 64 in batches of 4: the last stage's BatchNorms see 16 values
        # each. At 32 x 32 in batches of 2 (2 values each) ResNet-50's loss
        # is chaotic: float32 PyTorch 1.78, float64 PyTorch 0.87.
        return (torch.randn(4, 3, 64, 64, generator=g),
                torch.randint(0, 5, (4,), generator=g))
    x = torch.randint(3, V, (2, 8), generator=g)
    if kind == "sequence":
        return x, torch.randint(0, 3, (2,), generator=g)
    return x, torch.randint(0, V, (2, 8), generator=g)


def first_line(text):
    lines = [l for l in text.splitlines() if "error" in l.lower()]
    return (lines[0] if lines else text.strip().splitlines()[-1])[:300]


def main():
    import lmc_export
    names = sys.argv[1:] or list(MODELS)
    work = tempfile.mkdtemp()
    for name in names:
        kind, build = MODELS[name]
        torch.manual_seed(0)
        try:
            inner = build()
        except Exception as e:
            print(f"{name}: build failed: {type(e).__name__}: {e}"[:300])
            continue
        # Dropout 0, as in the tests (torchvision's VGG has 0.5 built in):
        # lmc draws its own masks, so the first losses would differ.
        for module in inner.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        with torch.no_grad():
            for p in inner.parameters():
                p.add_(0.02 * torch.randn_like(p))
        model = Logits(inner).train()
        x, y = data(kind)
        path = os.path.join(work, name + ".onnx")
        try:
            lmc_export.export(model, (x,), path)
        except Exception as e:
            print(f"{name}: export failed: {type(e).__name__}: "
                  f"{first_line(str(e))}")
            continue
        compiled = subprocess.run(
            ["lmc", path, "--batch", str(x.shape[0]), "-o",
             os.path.join(work, name),
             "--quiet"], capture_output=True, text=True)
        if compiled.returncode != 0:
            print(f"{name}: lmc refused: {first_line(compiled.stderr)}")
            continue
        try:
            got, want = lmc_export.first_losses(model, (x,), path, y,
                                                rtol=1e-4)
            print(f"{name}: ok, first loss {got:.7f} vs PyTorch {want:.7f} "
                  f"({abs(got - want) / abs(want):.1e})")
        except lmc_export.VerificationError as e:
            print(f"{name}: WRONG: {e}")
        except subprocess.CalledProcessError as e:
            out = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            print(f"{name}: lmc failed: {first_line(out) if out else e}")
        except Exception as e:
            print(f"{name}: failed: {type(e).__name__}: {e}"[:300])
            traceback.print_exc(limit=1)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
