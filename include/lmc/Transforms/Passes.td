//===- Passes.td - lmc training passes ----------------------*- tablegen -*-===//

#ifndef LMC_TRANSFORMS_PASSES_TD
#define LMC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LmcAttachLoss : Pass<"lmc-attach-loss", "::mlir::ModuleOp"> {
  let summary = "Makes the forward function return a scalar training loss";
  let description = [{
    Rewrites `@forward` so that its first result is the scalar loss and the
    model outputs follow it. `cross_entropy` adds an integer input `labels`
    of the logits' leading shape and computes mean softmax cross-entropy over
    the last axis, where labels equal to `ignore-index` (PyTorch's and
    Hugging Face's -100) count neither in the sum nor in the mean; `mse` adds a float input `targets` shaped like the output;
    `output:NAME` moves the model's own scalar output NAME first.
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "cross_entropy | mse | output:NAME">,
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "model output the loss is computed from (default: the first)">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross_entropy: the label value that is not counted">,
  ];
  let dependentDialects = ["::lmc::LmcDialect"];
}

def LmcLora : Pass<"lmc-lora", "::mlir::ModuleOp"> {
  let summary = "Adds low-rank adapters (LoRA) to matmul weights and "
                "freezes the rest of the model";
  let description = [{
    Run on the imported `@forward`, before the fusions and the loss. For
    every parameter `W` that `targets` names and that the model uses as the
    weight of `lmc.matmul`s (`x W^T`, as nn.Linear, or `x W` where the
    export stored the transpose), it adds two parameters after `W`,
    `<module>.lora_A.weight` [r, in] and `<module>.lora_B.weight` [out, r]
    (`<module>` is W's name without `.weight`: PEFT's names), and adds
    `scaling * dropout(x) A^T B^T` to each product, with `scaling` =
    alpha / r (`rslora`: alpha / sqrt(r)), as PEFT's LoRA layer computes.
    A starts as PEFT's `kaiming_uniform_(a=sqrt(5))`, uniform in
    (-1/sqrt(in), 1/sqrt(in)), from splitmix64 of `seed` (the same numbers
    on every machine); B starts at zero, so the adapted model computes what
    the base did. Dropout (`dropout` > 0) draws from the step's random key
    in a training step and is the identity in an evaluation step.

    `targets` is a comma-separated list (PEFT's `target_modules`): a name
    without wildcards matches a module whose name is it or ends with `.` and
    it (`q_proj`); one with `*`, `?` or `[` is a glob over the whole module
    name (`*.layers.1?.*_proj`); `all-linear` is every matmul weight except
    the output layer's (the one no other matmul depends on, as PEFT leaves
    out `lm_head`). Every other parameter gets `lmc.frozen` (lmc-autodiff
    folds it into a constant), except those whose whole name matches the
    `train` regex (PEFT's `modules_to_save`), so gradients, optimizer state
    and checkpoints exist for the adapters alone. A target that matches
    nothing, or a parameter that is not only a 2-D matmul weight, is an
    error naming what it matched. The module gets `lmc.lora = {rank, alpha,
    scaling, rslora, dropout, targets, weights, layouts}`: per adapted
    module its name, its weight's and the weight's layout (`out_in`,
    nn.Linear's, or `in_out`), what merging the adapters into the weights
    needs.

    `base-precision=bf16` holds every frozen float tensor of two or more
    dimensions in bf16 (its initial value rounded to nearest even): half
    the memory of the base. Each reader gets its own `lmc.convert` to f32
    right before it (a gather converts the rows it took), so the
    computation is the f32 model's with the bf16-rounded base, and
    lmc-autodiff recomputes the conversions the backward pass reads
    instead of keeping them.
  }];
  let options = [
    Option<"targets", "targets", "std::string", /*default=*/"\"\"",
           "comma-separated module names, globs or all-linear">,
    Option<"rank", "rank", "int64_t", /*default=*/"8",
           "the adapters' rank r">,
    Option<"alpha", "alpha", "double", /*default=*/"8.0",
           "the adapters' alpha (scaling alpha / r)">,
    Option<"rslora", "rslora", "bool", /*default=*/"false",
           "scale by alpha / sqrt(r) (rank-stabilized LoRA)">,
    Option<"dropout", "dropout", "double", /*default=*/"0.0",
           "dropout probability on the adapters' input">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "seed of the A matrices' initial values">,
    Option<"train", "train", "std::string", /*default=*/"\"\"",
           "regex of other parameters that keep training">,
    Option<"basePrecision", "base-precision", "::lmc::Precision",
           /*default=*/"::lmc::Precision::F32",
           "f32 | bf16: the type the frozen base is held in",
           [{::lmc::OdsEnumChoices<::lmc::Precision,
                                   ::lmc::getMaxEnumValForPrecision()>()}]>,
  ];
  let dependentDialects = ["::lmc::LmcDialect"];
}

def LmcAutodiff : Pass<"lmc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of the forward function";
  let description = [{
    Adds `@forward_grad`, which returns the loss (result 0 of `@forward`)
    followed by its gradient with respect to every argument tagged
    `lmc.param`, built from each op's `DifferentiableOpInterface`. Parameters
    with no differentiable path to the loss become constants (their
    `lmc.init` value) and are removed from the signature, and so do the
    parameters that `freeze` matches or `train` does not (fine-tuning).
    Parameters tagged `lmc.frozen` (lmc-lora's base weights) stay arguments
    of both functions without a gradient: the executable holds them as
    tensors of role `frozen`, which no step updates.
    With `loss-scale`, `@forward_grad` takes one more argument, an f32
    scalar tagged `lmc.loss_scale`, as the loss's cotangent instead of 1:
    every cotangent and gradient is scaled by it (dynamic loss scaling).
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "function to differentiate">,
    Option<"freeze", "freeze", "std::string", /*default=*/"\"\"",
           "parameters whose whole name matches this regex stay constant">,
    Option<"train", "train", "std::string", /*default=*/"\"\"",
           "only parameters whose whole name matches this regex train">,
    Option<"lossScale", "loss-scale", "bool", /*default=*/"false",
           "seed the reverse sweep with a loss-scale argument">,
  ];
  let dependentDialects = ["::lmc::LmcDialect", "::mlir::arith::ArithDialect"];
}

def LmcFuseLayerNorm : Pass<"lmc-fuse-layer-norm", "::mlir::ModuleOp"> {
  let summary = "Fuses imported layer normalizations into lmc.layer_norm";
  let description = [{
    Run on the imported model, before autodiff. Finds the decomposition an
    ONNX LayerNormalization over the last axis is imported as,
    `((x - mean(x)) * (1 / sqrt(mean((x - mean(x))^2) + eps))) * scale +
    bias` with the means `reduce_sum` over the last axis (kept) times
    1 / C, `scale` and `bias` `[C]` broadcast along it, on f32 with static
    shapes, each intermediate read only inside the chain, and replaces it
    by `lmc.layer_norm x, scale, bias {epsilon}`, whose gradient is
    `lmc.layer_norm_grad`: the runtime computes both a row at a time
    (runtime/kernels/layer_norm.cpp) instead of six loop nests forward and
    seven backward. The lmc driver runs it for f32 steps on the CPU
    without a mesh.
  }];
}

def LmcFuseAttention : Pass<"lmc-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "Fuses masked attention chains into lmc.attention";
  let description = [{
    Run on the imported model, before autodiff. Finds
    `matmul(softmax(select(mask, -inf, scale * matmul(q, kt))), v)` on f32
    (the scale a broadcast constant or absent; the -inf on either side of
    the select, the mask broadcast from `[1.., T, S]` to the scores; each
    intermediate read by the next op only) and replaces it by
    `lmc.attention q, kt, v, mask {scale}`, whose gradient is
    `lmc.attention_grad`. The runtime computes both in blocks of query
    rows over the keys each block's mask leaves visible, without the
    [batch.., T, S] scores and probabilities (a causal mask: about half
    the products skipped). The lmc driver runs it for f32 steps on the CPU
    without a mesh.

    The form PyTorch's dynamo exporter gives `scaled_dot_product_attention`
    (Hugging Face's GPT-2) is fused too: an additive mask,
    `softmax(matmul(q, kt) + M)` with M a constant — literal, or a select
    between two scalars that are constants or frozen parameters
    (`freeze` / `train`, as lmc-autodiff reads them) — holding 0 where a
    key is visible and -inf or a value as low (float32's lowest) where it
    is hidden, the same for every batch and head, and no row hiding every
    key; and `select(p != p, 0, p)` (the exporter's guard against rows
    without a visible key, which such a mask has none of) between the
    softmax and the product.
  }];
  let options = [
    Option<"freeze", "freeze", "std::string", /*default=*/"\"\"",
           "Regex of the parameters that stay constant (lmc-autodiff's)">,
    Option<"train", "train", "std::string", /*default=*/"\"\"",
           "Regex of the only parameters trained (lmc-autodiff's)">,
    Option<"keepExponentials", "keep-exponentials", "bool",
           /*default=*/"false",
           "Keep each pair's [T, S] exponentials for the gradient to read "
           "instead of recomputing them (the driver: unless --remat)">];
  let dependentDialects = ["::lmc::LmcDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcRematerialize : Pass<"lmc-rematerialize", "::mlir::ModuleOp"> {
  let summary = "Recomputes forward values in the backward pass instead of "
                "keeping them (activation checkpointing)";
  let description = [{
    Run on `@forward_grad` right after lmc-autodiff. The forward ops are
    those the loss (or an updated model buffer) depends on; the rest is the
    backward pass. The checkpoints ("cuts") are the loss's dominators in the
    dataflow graph from a model input (an argument tagged `lmc.input`; of
    several, the one with the most cuts, since labels join the data only
    at the loss): values every path from it to the loss passes through,
    such as a transformer's residual stream between its attention and MLP
    halves. Each other forward op that depends on that input belongs to the
    segment of its nearest dominating cut; ops that do not (masks, the
    labels' one-hot, dropout's random numbers) are kept.

    `policy=per-block`: every forward value the backward pass reads,
    except the cuts, is recomputed from its segment's cut right before the
    first backward op that reads its segment. `policy=selective`: only
    values with more elements than their segment's cut (attention's
    [B, H, T, T] tensors), from the values they are computed from.
    `policy=per-block:N`: the first N segments in program order (the one
    starting at the inputs first) per block, the others selectively — the
    steps between the two that `lmc --activation-budget` searches.
    Parameters, constants and values that do not depend on the data are
    never recomputed, nor are ops with regions or side effects.

    The clones read their segment's inputs through
    `lmc.optimization_barrier` (so CSE keeps them apart from the originals)
    and carry `lmc.recomputed`; the module gets `lmc.remat = {policy, cuts,
    recomputed}`.
  }];
  let options = [
    Option<"function", "function", "std::string",
           /*default=*/"\"forward_grad\"", "the differentiated function">,
    Option<"policy", "policy", "std::string", /*default=*/"\"per-block\"",
           "per-block | per-block:<segments> | selective">,
  ];
  let dependentDialects = ["::lmc::LmcDialect"];
}

def LmcOptimizer : Pass<"lmc-optimizer", "::mlir::ModuleOp"> {
  let summary = "Builds the training and evaluation entry points";
  let description = [{
    Builds `@train_step(params, optimizer state, inputs, hyper scalars)`
    returning the updated parameters and state, the loss and the global
    gradient norm (gradients are clipped to the `max_grad_norm` hyper first,
    as torch.nn.utils.clip_grad_norm_ does), with PyTorch's update formulas
    for `sgd`, `momentum`, `adam` and `adamw`, and
    `@eval_step(params, inputs)` returning the loss and the model outputs.
    The same step also comes in two halves, for gradient accumulation and
    data-parallel averaging in the runtime: `@grad_step(params, inputs)`
    returns the gradients and the loss, `@apply_step(params, state, grads,
    hypers)` clips and updates; `@train_step` calls the two.
    For ZeRO-1 (optimizer state sharded over the data-parallel processes)
    `@chunk_step(param, state, grad, hypers, grad_norm)` runs the same
    update on one chunk of `chunk-elements` floats of the flattened
    parameters, clipped with a global norm the runtime computed (not built
    with dynamic loss scaling).
    Argument and result roles are recorded as `lmc.role` / `lmc.name`
    attributes (docs/runtime-abi.md).
  }];
  let options = [
    Option<"optimizer", "optimizer", "::lmc::Optimizer",
           /*default=*/"::lmc::Optimizer::AdamW",
           "sgd | momentum | adam | adamw",
           [{::lmc::TableChoices<::lmc::kOptimizerNames>()}]>,
    Option<"lr", "lr", "double", /*default=*/"1e-3",
           "default learning rate recorded for the runtime">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9", "SGD momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "weight decay (decoupled for adamw, L2 otherwise)">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "default global gradient-norm clipping threshold (0 = off)">,
    Option<"lossScaleGrowthInterval", "loss-scale-growth-interval", "int64_t",
           /*default=*/"2000",
           "dynamic loss scaling (when @forward_grad has a loss-scale "
           "argument): clean steps before the scale doubles">,
    Option<"chunkElements", "chunk-elements", "int64_t",
           /*default=*/"16384",
           "floats per @chunk_step call (ZeRO-1's update of a shard)">,
  ];
  let dependentDialects = ["::lmc::LmcDialect", "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcMixedPrecision : Pass<"lmc-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Runs compute-bound ops with bf16/f16 inputs and f32 accumulation";
  let description = [{
    Applies the precision policy of `PrecisionPolicyOpInterface` to every
    function after the optimizer phase (forward and backward alike): an op
    that allows low-precision inputs (matmul) and computes in f32 gets its
    operands converted to `precision` and keeps its f32 result, so the
    product accumulates in f32. Everything else (softmax, normalization,
    reductions, exp/log, losses, the optimizer update, and so the master
    weights and optimizer state) stays f32. A value feeding several such ops
    is converted once, right after its definition, and the conversion is
    reused. `keep-f32` keeps f32 the ops whose location names (the ONNX node
    or DSL name) match it, and those that read an entry-point argument whose
    `lmc.name` (a parameter name) matches it. `precision=f32` changes
    nothing.
  }];
  let options = [
    Option<"precision", "precision", "::lmc::Precision",
           /*default=*/"::lmc::Precision::F32", "f32 | bf16 | f16",
           [{::lmc::OdsEnumChoices<::lmc::Precision,
                                   ::lmc::getMaxEnumValForPrecision()>()}]>,
    Option<"keepF32", "keep-f32", "std::string", /*default=*/"\"\"",
           "regex over op and parameter names that stay f32">,
  ];
  let dependentDialects = ["::lmc::LmcDialect"];
}

def LmcShardAnnotate : Pass<"lmc-shard-annotate", "::mlir::ModuleOp"> {
  let summary = "Declares the process mesh and the shardings the user chose";
  let description = [{
    Runs on the linalg form of the entry points (docs/distributed.md says
    why). Adds `shard.grid @mesh` with the sizes of `mesh` ("data=2,model=2":
    grid axis 0 is `data`, axis 1 `model`) and annotates every entry point:
    a parameter that a `shard` rule ("GLOB=AXES", one `_` or mesh axis per
    dimension, first matching rule wins) matches gets that sharding on its
    argument and on its result, and so do its gradient and its optimizer
    state (`<param>.<slot>`, same shape); with a `data` axis the inputs are
    split on their first (batch) dimension over it. Everything else is left
    to upstream `sharding-propagation`. First it rewrites two forms upstream
    cannot shard: constant-0 indexing map results (size-1 dimensions of
    keep-dims reductions and their broadcasts) get loops of extent 1, and
    non-splat tensor constants move into the body of a generic that reads
    them element by element.
  }];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"\"\"",
           "axis sizes, e.g. data=2,model=2">,
    Option<"shard", "shard", "std::string", /*default=*/"\"\"",
           "GLOB=AXES rules for parameters separated by ';', e.g. "
           "*.fc1.weight=model,_">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def LmcShardComplete : Pass<"lmc-shard-complete", "::mlir::func::FuncOp"> {
  let summary = "Replicates the tensors that sharding propagation left bare";
  let description = [{
    Upstream `shard-partition` needs a sharding for every tensor it meets,
    but `sharding-propagation` only reaches values connected to an
    annotation: a constant returned as it is, or a tensor argument no
    sharded op reads, stays bare and partitioning fails without a message.
    This pass, run between the two, annotates each such value (function
    arguments and op results) as replicated on the function's grid, gives
    every direct read an annotation with the value's own sharding, runs ops
    that read `linalg.index` replicated, routes tensors read inside a region
    (a gather's table) through an annotation (and refuses split ones), and
    writes propagation's empty replicated split lists as `[[]]`.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def LmcBucketAllReduces
    : Pass<"lmc-bucket-all-reduces", "::mlir::func::FuncOp"> {
  let summary = "Merges the all-reduces of a partitioned step";
  let description = [{
    After `shard-partition`, first: all-reduces (sums) whose results are
    added elementwise become one all-reduce of the added inputs, looking
    through the reshapes after them — attention's input gradient, whose q,
    k and v parts are each a row-split product, then costs one collective
    instead of three, as in Megatron. Then the rank-0 f32
    `shard.all_reduce` ops of a block over the same grid, axes and
    reduction, none of whose inputs depends on another's result, become one
    all-reduce of a vector
    (`tensor.from_elements` in, `tensor.extract` out) where the first of
    them was; the pure ops computing the later inputs move up before it. A
    tensor-parallel step's gradient-norm partial sums (one per split
    parameter) then cost one collective instead of one each — the scalar
    counterpart of the data-parallel gradient bucket. An input computed
    by an op with memory effects or by another collective stays apart.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LmcSplitFusedProjections
    : Pass<"lmc-split-fused-projections", "::mlir::ModuleOp"> {
  let summary = "Makes each slice of a fused projection a parameter of its own";
  let description = [{
    On the forward function, before autodiff, with the user's `--shard`
    rules. A value whose users are slices cutting one axis into equal
    contiguous pieces (GPT-2's q, k and v from one projection), computed
    from parameters along that axis through adds, broadcasts, reshapes,
    transposes and matmuls (the projection's weight rows and bias), has
    its parameters cut into one parameter per piece along dimension 0
    (`<name>#<i>`, the initial value cut alike) when a rule splits
    dimension 0 of one of them and nothing else reads them: each slice is
    then computed from its pieces, and the fused parameters, the fused
    computation and the slices are gone. Column-splitting each piece over
    `model` is a split over attention's heads; the fused tensor's rows in
    blocks would not be. The module's `lmc.pieces` maps pieces to the
    fused parameter; the descriptor's `join` lines tell the runtime, which
    reads and writes the fused tensor in files.
  }];
  let options = [
    Option<"shard", "shard", "std::string", /*default=*/"\"\"",
           "--shard rules, separated by ';'">];
}

def LmcCollapseBatchMatmuls
    : Pass<"lmc-collapse-batch-matmuls", "::mlir::func::FuncOp"> {
  let summary = "Turns contractions with several batch dimensions into "
                "linalg.batch_matmul";
  let description = [{
    After `shard-partition`: a linalg.generic contraction with one m, n and
    k loop and two or more batch loops that lead every operand in loop order
    (the form lmc lowers a sharded module's multi-batch matmuls to, so that
    a split of attention's heads propagates) becomes a
    `linalg.batch_matmul` over the collapsed batch, its operands and result
    reshaped around it; the transposes stay in its indexing maps.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // LMC_TRANSFORMS_PASSES_TD
