//===- Passes.td - lmc conversion passes --------------------*- tablegen -*-===//

#ifndef LMC_LOWERING_PASSES_TD
#define LMC_LOWERING_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLmcToLinalg : Pass<"convert-lmc-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lowers lmc ops to linalg, tensor, arith and math on tensors";
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"shardable", "shardable", "bool", /*default=*/"false",
           "Lower to forms upstream sharding propagation sees through: "
           "scatter-add as one linalg.generic reducing over the indices "
           "(O(result x indices)) instead of a loop nest over its updates "
           "(O(updates)), concat as one linalg.generic reading every piece "
           "instead of copies into slices of the result, slice as a "
           "linalg.generic instead of tensor.extract_slice">,
    Option<"checkIndices", "check-indices", "bool", /*default=*/"false",
           "A gather index outside [-size, size) calls the runtime's "
           "lmc_rt_index_out_of_range instead of being clamped, and an "
           "integer division by zero lmc_rt_integer_division_by_zero "
           "instead of giving 0 (each ends the run, naming the op's ONNX "
           "node or DSL position): CPU steps only (a GPU kernel cannot "
           "call the host)">,
    Option<"convolutionsToRuntime", "convolutions-to-runtime", "bool",
           /*default=*/"false",
           "Keep lmc.conv, lmc.conv_input_grad and lmc.conv_weight_grad "
           "with an f32 result for lmc-convolution-to-runtime (the "
           "runtime's im2col + GEMM kernels) instead of lowering them to "
           "loop nests: CPU steps only">];
}

def LmcMatmulToRuntime : Pass<"lmc-matmul-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Replaces buffer-level matmuls with calls to the runtime's BLAS";
  let description = [{
    After bufferization, rewrites `linalg.matmul` and `linalg.batch_matmul`
    (optionally fed by `linalg.transpose` of a whole operand) on dense
    identity-layout memrefs into calls to `lmc_rt_matmul_f32` /
    `lmc_rt_matmul_f64` (runtime/kernels), which accumulate into the output
    like the linalg ops do. A `linalg.fill` of +0.0 into the output right
    before the product is erased and the call overwrites the output instead
    (its last argument, `accumulate`, 0: BLAS beta = 0), one pass over the
    output instead of two. The CUDA target calls `lmc_rt_cuda_matmul_*`
    (cuBLAS, runtime/cuda) with the same arguments.
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"lmc_rt_matmul_\"",
           "Name of the called kernels before the element type suffix">];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::index::IndexDialect"];
}

def LmcShardToRuntime : Pass<"lmc-shard-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers the partitioned step's collectives to runtime calls";
  let description = [{
    After `shard-partition`, on tensors: `shard.all_reduce` (sum, max) and
    `shard.all_gather` of f32 tensors become calls to
    `lmc_rt_model_all_reduce[_max]_f32` / `lmc_rt_model_all_gather_f32` on a
    buffer (`bufferization.to_buffer`, a copy, `to_tensor restrict`), which
    run over the process's model group (docs/runtime-abi.md);
    `shard.process_multi_index` becomes `lmc_rt_model_rank`, and
    `shard.all_slice` a `tensor.extract_slice` at the process's offset. The
    grid goes away. Any other shard op is an error.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LmcFuseElementwise : Pass<"lmc-fuse-elementwise"> {
  let summary = "Fuses elementwise linalg chains, keeping contractions named";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` (producer/consumer fusion of
    `linalg.generic`s, reshape propagation by expansion, constant folding),
    with one difference: named linalg ops (`linalg.matmul`,
    `linalg.batch_matmul`, fills, transposes) are never fused with a reshape
    or an elementwise op. Upstream would expand a matmul fed by a
    `tensor.collapse_shape` into a `linalg.generic` over the uncollapsed
    dimensions, which `lmc-matmul-to-runtime` can no longer send to BLAS (a
    4x-8x slower step on a GPT).

    Cheap producers read by several consumers are recomputed in each
    (lib/Lowering/FuseElementwise/DuplicateProducers.h); with `into-sums`
    (the CPU path) a plain-arithmetic producer also into sum reductions,
    which the GPU path splits across threads its own way.
  }];
  let options = [
    Option<"intoSums", "into-sums", "bool", /*default=*/"false",
           "Also recompute plain-arithmetic producers in sum reductions">];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def LmcChunkReductions : Pass<"lmc-chunk-reductions"> {
  let summary = "Reduces long sums to a scalar in fixed contiguous chunks";
  let description = [{
    A `linalg.generic` (tensors) that reduces all of its identity-indexed
    inputs to a 0-d result with one combiner (`out + x`, `max(out, x)`:
    a gradient's squared norm, a loss's sum) has no parallel dimension,
    so it runs on one thread. With at least `min-elements` iterations it
    becomes a generic over `[C, n / C]` inputs (the largest C <= 64 that
    divides n; the inputs reshaped, each chunk contiguous) whose first
    dimension is parallel, starting each chunk from the combiner's neutral
    element, and a reduction of the C values into the original init.
    C depends on n only: the sum's order, and its bits, are the same on
    any number of threads. Run on the CPU path after
    `lmc-fuse-elementwise` (the GPU path splits reductions its own way).
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"65536",
           "Iterations below which a reduction stays one loop">];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcApproximateMath : Pass<"lmc-approximate-math"> {
  let summary = "f32 exp, erf and tanh as vectorizable approximations";
  let description = [{
    Rewrites `math.exp` and `math.tanh` on f32 (scalars and vectors) into
    upstream's polynomial approximations (`populateMathPolynomial
    ApproximationPatterns`) and `math.erf` into lmc's rational function
    x*P(x^2)/Q(x^2) on [-4, 4] (twelve FMAs and a division): plain
    arithmetic that LLVM vectorizes, where a libm call (`expf`, `erff`,
    `tanhf`) per element keeps the loops of softmax, GELU (exact, and the
    tanh form of GPT-2) and their gradients scalar. Other types (f64 for
    the gradient checker) keep libm.
  }];
  // tanh's approximation builds vector ops (splats of its constants).
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def LmcExpandArith : Pass<"lmc-expand-arith"> {
  let summary = "arith-expand for the host, keeping maximumf and minimumf";
  let description = [{
    Expands what LLVM lowering lacks, as upstream's `arith-expand
    {include-bf16}` does (`ceildivsi`/`floordivsi`, bf16 `extf`/`truncf`
    as integer arithmetic with the same rounding on every CPU), but leaves
    `arith.maximumf`/`minimumf` alone: they become `llvm.maximum`/
    `llvm.minimum`, which LLVM's loop vectorizer recognizes as reductions.
    Upstream's compare-and-select expansion keeps a softmax's row maximum
    scalar (about 2% of a GPT training step here).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LmcStridedCopiesToLinalg : Pass<"lmc-strided-copies-to-linalg"> {
  let summary = "Rewrites memref.copy with a strided side into linalg.copy";
  let description = [{
    Run after bufferization on the CPU path. A `memref.copy` between
    contiguous buffers stays (LLVM lowering makes it a memcpy); one that
    reads or writes a strided view (a concat piece written into its slice
    of the result) becomes `linalg.copy`, which the linalg-to-loops
    conversion turns into loops. LLVM lowering would call MLIR's C runner
    library (`memrefCopy`) for it, which lmc executables do not link.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LmcMarkGradientsReady
    : Pass<"lmc-mark-gradients-ready", "::mlir::ModuleOp"> {
  let summary = "Calls the runtime when each gradient of grad_step is final";
  let description = [{
    Run after bufferization and deallocation. In `grad_step`, after the
    last op that reaches a gradient's out-parameter (uses it, or uses a
    value computed from it: a view, a pointer handed to a runtime matmul),
    a call `lmc_rt_gradient_ready(k)` says that gradient k (in the order of
    the `grad` arguments) is final: a data-parallel runtime starts the
    all-reduce of a bucket of gradients as soon as all of them are, while
    the backward pass goes on (docs/distributed.md). A gradient nothing
    writes is final at the start.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LmcPlanBuffers : Pass<"lmc-plan-buffers", "::mlir::ModuleOp"> {
  let summary = "Places each function's intermediate buffers in one arena";
  let description = [{
    Run after bufferization and deallocation. In each
    function nothing in the module calls (the entry points, which the
    runtime calls one at a time), the buffers allocated and freed in its
    body (static shape, identity layout, whole bytes per element) get
    offsets in an arena: a buffer lives from its `memref.alloc` to the
    last op of the body that reaches it (uses it or a value computed from
    it: a view, a pointer, a loop nest reading it; ownership-based
    deallocation puts every `memref.dealloc` at the end of the body, which
    would keep every buffer to the end), and two buffers whose lives overlap get disjoint
    bytes (in program order, each at the lowest 64-byte-aligned offset
    clear of the live buffers placed before it; largest first instead when
    that makes the arena more than 1/64 smaller). The arena is a private
    uninitialized global the entry points share, as big as the biggest of
    their plans (allocated per call, one above glibc's mmap threshold would
    be mapped and page-faulted in afresh on every step). Each alloc
    becomes a `memref.view` of the arena tagged `lmc.planned`
    (lmc-outline-loop-nests then knows two planned views are disjoint, as
    two allocations are) and its dealloc goes. A step then allocates
    nothing and its memory is known when it is compiled: the module's
    `lmc.arenas` dictionary gives each function's arena size, which the
    descriptor reports (`arena <function> <bytes>`).

    With `arena-from-runtime` (what `lmc` uses on every target) each
    planned function starts by calling `lmc_rt_step_arena(bytes)` for the
    arena instead: the runtime returns the same memory on every call, one
    mapping made at run time (device memory on a GPU, whose kernels cannot
    reach a global of the host binary). A global sits in `.bss`, which
    x86-64's small code model caps near 2 GiB.

    With `poison`, each buffer's view is first filled with 0xFF bytes
    (`lmc_rt_poison_buffer(view, bytes)`), so that a kernel reading part of
    a buffer no kernel wrote computes NaN or out-of-range values instead of
    whatever an earlier buffer left in those bytes (`lmc
    --poison-step-buffers`, for tests).
  }];
  let options = [
    Option<"arenaFromRuntime", "arena-from-runtime", "bool", "false",
           "Take the arena from the runtime's lmc_rt_step_arena instead of "
           "a global">,
    Option<"poison", "poison", "bool", "false",
           "Fill each buffer with 0xFF bytes (f32 NaN, integer -1, i1 true) "
           "where it is allocated, by a call of lmc_rt_poison_buffer: a "
           "read of a buffer before anything wrote it then shows in the "
           "results instead of reading what the arena held (a checking "
           "build's option; host code only)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LmcDerivativesInForward : Pass<"lmc-derivatives-in-forward"> {
  let summary = "Activation derivatives computed by the forward loop and saved";
  let description = [{
    Run after `lmc-fuse-elementwise`. A backward loop (all-parallel
    `linalg.generic`, one f32 result: an activation's gradient) whose
    result is one input, the cotangent, times a factor of the others (its
    yield linear and homogeneous in that input: reached through
    multiplications and divisions by values free of it, sums, differences
    and negations only) becomes the cotangent times that factor, and the
    factor (the body with the cotangent set to 1) becomes a result of the
    forward loop that holds every other input over the same loops, each
    read with the same indexing map or written by that loop (the
    activation's own loop, which already evaluates most of it: GELU's erf
    or tanh). Forward results only the backward loop read go. Only when
    that pays: the factor evaluates a math function (the exact GELU's erf
    and exp) or reads two or more full-size tensors (the tanh GELU's
    pre-activation and the 1 + tanh its forward saved); and only when one
    full-size input is then read by the forward loop alone, so that the
    saved derivative takes the place of a tensor that no longer lives
    until the backward. Benchmark GPT, one thread: GELU loops 2.35 + 6.0
    -> 3.88 + 2.9 ms per step; GPT-2 124M at 4 x 256: 28 + 42 -> 32.5 +
    28 ms, activations 750.8 -> 618.8 MiB. In floating point dy * f'(x)
    may differ from the fused body in the last bits; it is how PyTorch's
    own GELU backward computes it.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcUntieFills : Pass<"lmc-untie-fills"> {
  let summary = "Gives every op that writes into a tensor fill a fill of its own";
  let description = [{
    Run between `cse` and bufferization: CSE merges identical
    `linalg.fill`s, and one zero tensor becomes the destination of many ops
    that accumulate into it (matmuls, reductions). Bufferization then fills
    one buffer and copies it for every destination but one (about 100 MB
    of memcpy per step of the benchmark GPT). This pass clones the fill in
    front of each op that uses it as a destination, except the first in
    program order when nothing else reads the fill. Uses that only read
    the fill keep the original.

    Then each `tensor.empty` CSE shared between many destinations is split
    into one per run of 4 consecutive destinations (program order; the
    first run keeps the original). One empty per shape for the whole step
    put every value written into it in one alias set of one-shot
    bufferization, whose conflict checks are quadratic in the set: 79 s of
    GPT-2 774M's compile, about 1 s after. Runs keep the in-place reuse
    between neighbouring ops (train_step arena within -2.4 % to +4.3 % of
    one empty per shape on GPT-2 124M to 774M).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LmcHoistReductions : Pass<"lmc-hoist-reductions"> {
  let summary = "Moves each large-to-small reduction right after the op "
                "that produces what it reads";
  let description = [{
    Run on tensors after lmc-chunk-reductions. A `linalg.generic` with a
    reduction loop, one input and results at least 16 times smaller than
    that input (the gradient norm's per-chunk sums of squares, their sum)
    moves to right after the op that computes its input (through
    reshapes), together with the cheap ops it needs from after that point
    (the reshape, its destination's fill and empty tensor); if those cannot
    move (an op with side effects among them) it stays. The optimizer's
    norm then reads each gradient just after the backward pass wrote it,
    still in cache, instead of from memory after the whole backward pass.
    Only the order of ops changes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LmcElementwiseInPlace : Pass<"lmc-elementwise-in-place"> {
  let summary = "Writes elementwise results over inputs that die with them";
  let description = [{
    Run right before one-shot bufferization. In an all-parallel
    `linalg.generic`, each destination that is an empty tensor its payload
    does not read, with an identity indexing map, becomes an input of the
    same type, read through an identity map, whose only use is this op and
    whose buffer the function allocates itself (an empty tensor, reached
    through reshapes and linalg destinations; never an argument or a
    constant). Bufferization then writes the result over that input where
    its analysis finds it safe: no fresh buffer, one stream of memory less
    per loop. Each input serves one destination.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LmcDropOptimizationBarriers : Pass<"lmc-drop-optimization-barriers"> {
  let summary = "Replaces each lmc.optimization_barrier by its operand";
  let description = [{
    Run after the last CSE, before bufferization: the barriers
    lmc-rematerialize puts in front of recomputed forward values kept CSE
    from merging the recomputation back into the original; nothing after
    this point merges equal ops.
  }];
}

def LmcUntieResults : Pass<"lmc-untie-results"> {
  let summary = "Gives a tensor a function returns more than once a copy "
                "per repetition";
  let description = [{
    Run after the last CSE, before bufferization. CSE merges equal values,
    and two results of a step can be equal (the weight gradients of two
    BatchNorms of one input with equal weights). One tensor returned twice
    becomes one buffer returned twice, which buffer-results-to-out-params
    frees twice. Every repetition after the first is replaced by a
    `bufferization.alloc_tensor` copy of it.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def LmcTieUpdatesToArguments
    : Pass<"lmc-tie-updates-to-arguments", "::mlir::ModuleOp"> {
  let summary = "Makes the updated params and optimizer state of a step "
                "destinations of its arguments";
  let description = [{
    Run right before one-shot bufferization. In `train_step` and
    `apply_step`, each result with role `param` or `state` whose producer
    is a linalg op with an unread destination (an empty tensor, or one its
    payload ignores) gets the argument of the same role and name as that
    destination, and the tag `lmc.updates_argument = <position>`.
    Bufferization then writes the update over the old value where its
    analysis finds that safe (no reader of the old value comes after), and
    copies where it does not; lmc-drop-in-place-results reads the outcome.
    Without it the runtime keeps two copies of every param and state.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LmcDropInPlaceResults
    : Pass<"lmc-drop-in-place-results", "::mlir::ModuleOp"> {
  let summary = "Drops the results bufferization wrote over their arguments";
  let description = [{
    Run after one-shot bufferization, before
    `buffer-results-to-out-params`. A result tagged
    `lmc.updates_argument` that is now its argument's buffer was updated in
    place. When that holds for every result of the tensor's name in
    `train_step` and `apply_step` (they share the runtime's buffers), those
    results are erased; the module gets `lmc.in_place` (the names) and
    `lmc.in_place_slots` (per function, the positions of the erased results
    in the packed buffer list: arguments, then results). Other tagged
    results lose the tag and stay results (out-params copy them).
  }];
}

def LmcScatterAddsToLoops
    : Pass<"lmc-scatter-adds-to-loops", "::mlir::func::FuncOp"> {
  let summary = "Turns the linalg.generic form of a scatter-add into loops "
                "over its updates";
  let description = [{
    After `shard-partition`: `convert-lmc-to-linalg{shardable}` lowers
    `lmc.scatter_add` (an embedding's gradient) to one linalg.generic that
    sharding propagates through, marked `lmc.scatter_add_axis`; it compares
    every table row with every index, O(rows x updates) — a third of a
    tensor-parallel GPT's step. Partitioning keeps it whole (it reads its
    iteration index); this pass rebuilds it as the O(updates) loop nest
    unsharded lowering emits, adding each update into its row of the
    generic's zero-filled init.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcCollapseInnerLoops : Pass<"lmc-collapse-inner-loops"> {
  let summary = "Folds the short trailing loops of elementwise linalg ops into one";
  let description = [{
    On buffers, before `convert-linalg-to-parallel-loops`: a
    `linalg.generic` with only parallel loops (three or more), no
    `linalg.index`, and dense static operands (identity layouts) whose
    innermost loop has fewer than `min-inner` iterations gets its
    trailing loops folded into one (`linalg::collapseOpIterationDims`,
    operands through `memref.collapse_shape`, one per buffer even when
    the op reads and writes it): the fewest trailing loops
    that reach `min-inner` iterations, never the first, and only loops
    every indexing map keeps adjacent. [512, 512, 3, 3] becomes [512,
    4608], [4, 64, 16, 16] becomes [4, 64, 256]: a long innermost loop
    vectorizes, and lmc-parallelize-loops still shares the leading ones.
    The order in which each element is computed does not matter (no
    reductions), so results are unchanged.
  }];
  let options = [
    Option<"minInner", "min-inner", "int64_t", /*default=*/"256",
           "Innermost iterations below which trailing loops are folded">];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LmcParallelizeLoops : Pass<"lmc-parallelize-loops"> {
  let summary = "Keeps the scf.parallel loops worth running on several threads";
  let description = [{
    After `convert-linalg-to-parallel-loops` (before `convert-scf-to-openmp`
    turns what stays parallel into OpenMP work-sharing loops): a loop nest
    with fewer than `min-work` innermost iterations becomes sequential
    `scf.for` loops (forking threads costs microseconds); a larger one keeps
    its leading dimensions parallel until they give 64 chunks of work, and
    runs the others as `scf.for` loops inside, so that each thread gets
    contiguous rows and the innermost loop still vectorizes. The last
    dimension stays sequential unless it is the only one. A parallel loop
    nested in another (parallel dimensions inside a reduction's loop) runs
    sequentially: as a nested OpenMP region it would fork, serialized, once
    per iteration of the outer loop. A parallel loop inside a perfect nest
    of `scf.for` loops (a linalg op whose reductions come first: a bias or
    layer-norm weight gradient, a sum over rows per column) moves out when
    its first dimension has at least 256 iterations: that dimension is cut
    into one run per thread (the count read at run time from
    `lmc_rt_thread_count`, at least 128 iterations each, starting on a
    64-byte line), each run streamed row after row with the reduction
    loops outside it. Each output element still accumulates in the
    reduction loops' order, so results are bitwise those of one thread.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "Innermost iterations below which a nest runs on one thread">];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect"];
}

def LmcAttentionToRuntime : Pass<"lmc-attention-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers lmc.attention and lmc.attention_grad to runtime calls";
  let description = [{
    Each op becomes a call of `lmc_rt_attention_f32` /
    `lmc_rt_attention_grad_f32` (runtime/kernels/attention.cpp) on
    buffers (`bufferization.to_buffer`, read only) and fresh result
    buffers (`memref.alloc`, back to tensors with
    `bufferization.to_tensor restrict`), with a constant table of each
    matrix's strides (`memref.global`): an operand made from a dense
    tensor by `linalg.transpose`, reshapes and unit-stride
    `tensor.extract_slice` is read in that tensor's buffer, a result that
    a transpose reads is written in the transpose's order, and the
    transposes are erased. Run after the last CSE, right
    before one-shot bufferization: CSE merges identical `to_buffer`s, and
    a merged read placed at the forward's call would let bufferization
    reuse the buffer before the backward's call reads it. f32 only (an
    error otherwise).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcLayerNormToRuntime : Pass<"lmc-layer-norm-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers lmc.layer_norm and lmc.layer_norm_grad to runtime calls";
  let description = [{
    Each op becomes a call of `lmc_rt_layer_norm_f32` /
    `lmc_rt_layer_norm_grad_f32` (runtime/kernels/layer_norm.cpp) with its
    operands' buffers (`bufferization.to_buffer`, read only), fresh
    buffers for its results (`memref.alloc`, back to tensors with
    `bufferization.to_tensor restrict`), the rows (every dimension but the
    last) and the row width, and the forward's epsilon. Run after the last
    CSE, right before one-shot bufferization, as lmc-attention-to-runtime.
    f32 only (an error otherwise).
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcConvolutionToRuntime : Pass<"lmc-convolution-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lowers convolutions to the runtime's im2col + GEMM kernels";
  let description = [{
    Each `lmc.conv`, `lmc.conv_input_grad` and `lmc.conv_weight_grad`
    with an f32 result (kept by
    `convert-lmc-to-linalg{convolutions-to-runtime}`) becomes a call of
    `lmc_rt_conv_f32`, `lmc_rt_conv_input_grad_f32` or
    `lmc_rt_conv_weight_grad_f32` (runtime/kernels/convolution.cpp) with
    its operands' buffers (`bufferization.to_buffer`, read only; a bf16 or
    f16 operand of mixed precision widened to f32 first by an elementwise
    `linalg.generic`, exactly: the products are the same), a fresh
    buffer for its result (`memref.alloc`, back to a tensor with
    `bufferization.to_tensor restrict`) and the address of a constant
    `lmc_rt_conv_geometry` table (`memref.global`): batch, channels,
    filters, groups, then per spatial dimension (three, the leading unused
    ones of size 1) the input, kernel and output sizes, strides,
    dilations and low paddings. Run after the last CSE, right before
    one-shot bufferization, as lmc-attention-to-runtime.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::arith::ArithDialect"];
}

def LmcMergeGpuModules : Pass<"lmc-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Gathers the kernels each host function launches into one gpu.module";
  let description = [{
    Run after `gpu-kernel-outlining`, which puts every kernel in a
    `gpu.module` of its own: GPT-2 124M's step has about 13,500 of them,
    and `gpu-module-to-binary` builds an LLVM target machine, runs the
    NVPTX backend and starts `ptxas` once per module (5 ms each, 99 s of
    the 140 s compile), and the executable loads each as a CUDA library at
    startup. This pass moves the kernels launched from one host function
    into one module named after it (`@train_step_kernels`), each kernel
    renamed after the module it came from (unique in the parent), and
    updates the launches. A module holding anything but one `gpu.func`
    kernel, or carrying attributes (targets), is left as it is.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LmcAssembleGpuKernels : Pass<"lmc-assemble-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Assembles each gpu.binary's PTX with ptxas and checks that every launch fits its kernel's resources";
  let description = [{
    Run after `gpu-module-to-binary{format=isa}`, whose objects are PTX.
    `ptxas -v` assembles each object for its target's chip and optimization
    level (the toolkit's `fatbinary` then wraps the machine code and the
    PTX, as `gpu-module-to-binary{format=fatbin}` does, or the PTX object
    stays for the driver's JIT with `format=ptx`), and its report gives
    every kernel's registers per thread, spill stores and loads, static
    shared memory and stack frame. Each `gpu.launch_func` is checked
    against the architecture with them: a block of more threads than
    1024 or than the kernel's `.maxntid`, more registers than the block
    may hold (64 K, 32 K on sm_53 and sm_62; allocated per warp in units
    of 256) or more than 48 KiB of shared memory (static plus dynamic)
    cannot launch, and is an error naming the kernel and the limit rather
    than a failure at run time. A kernel that spills registers to local
    memory is a warning. The resources stay on each binary as
    `lmc.kernel_resources`, a dictionary from kernel name to {registers,
    spill_stores, spill_loads, shared_bytes, stack_bytes} (what
    `lmc --target cuda -v` summarises).

    Why not `format=fatbin` directly: `gpu-module-to-binary` runs the same
    two tools but keeps ptxas's report only in debug builds.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"/usr/local/cuda\"",
           "CUDA toolkit holding bin/ptxas and bin/fatbinary">,
    Option<"format", "format", "::lmc::GpuBinaryFormat",
           /*default=*/"::lmc::GpuBinaryFormat::Fatbin",
           "The object each binary keeps",
           [{::llvm::cl::values(
             clEnumValN(::lmc::GpuBinaryFormat::Fatbin, "fatbin",
                        "machine code for the chip and the PTX"),
             clEnumValN(::lmc::GpuBinaryFormat::Ptx, "ptx",
                        "the PTX alone (compiled by the driver at load)"))}]>];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LmcLinalgToGpuLoops : Pass<"lmc-linalg-to-gpu-loops", "::mlir::ModuleOp"> {
  let summary = "Lowers linalg ops on buffers to GPU-mapped parallel loops";
  let description = [{
    The CUDA target's replacement for `convert-linalg-to-parallel-loops`
    (after bufferization and `lmc-matmul-to-runtime`). Every linalg op
    becomes one `scf.parallel` loop over its parallel dimensions, moved
    first (`linalg.generic` interchange) so that a reduction runs as an
    `scf.for` inside each thread instead of around a launch; its dimensions
    are collapsed into one and tiled by `block-size` (an `scf.if` guards the
    last tile), the tile loop mapped to GPU blocks and the loop inside to
    threads. `convert-parallel-loops-to-gpu` then makes one kernel launch of
    each. A reduction with fewer output elements than `reduction-threads`
    and more than 256 iterations per output is split first: S partial
    results per output (S dividing the reduced iterations, at least 32
    each; partial s takes iterations s, s + S, ... so that neighbouring
    threads read neighbouring elements), accumulated in a register from
    the combiner's neutral element and stored to a buffer, then a generic
    combining them into the output, itself split again while long — when
    every output is `out ⊕ value` for a combiner with a neutral element
    (sum, max, min). An op without parallel dimensions that is not split
    (a short reduction to a scalar) runs on one thread of a one-block
    kernel. A perfect loop nest built before bufferization (the scatter-add
    of an embedding gradient) becomes a kernel over its independent loops —
    those whose induction variable indexes the one buffer it writes, so
    their iterations write apart — with the others sequential inside each
    thread in their order (each element sums as on the CPU); a nest
    without one runs on one thread. Runs of single-element loads and
    stores at function level (scalars packed into one buffer for a
    collective and unpacked after it) become one-thread kernels.
    One-thread kernels that follow each other (constants, allocations and
    deallocations between them aside) are merged into one. Copies
    between buffers become `linalg.copy` kernels. Globals (constant tables) live in
    the host binary, out of the kernels' reach: each function copies the
    ones it reads into a buffer of its own with `lmc_rt_copy_in` at its
    start and frees it before returning. Then no op at function level reads
    or writes memory itself (checked: an error names one that would), so
    the host may run ahead of the GPU until the step returns.

    Example (block-size 256):

    ```mlir
    // linalg.generic {iterator_types = ["reduction", "parallel"]}
    //   ins(%g : memref<32x10xf32>) outs(%b : memref<10xf32>)
    scf.parallel (%t) = (%c0) to (%c1) step (%c256) {
      scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
        scf.if (%t + %i < 10) {
          scf.for %k = %c0 to %c32 step %c1 { ... }
        }
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
    Option<"reductionThreads", "reduction-threads", "int64_t",
           /*default=*/"65536",
           "Split a reduction over more than 256 iterations with fewer "
           "output elements than this into partial results and their "
           "combination (0: never)">];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::gpu::GPUDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::linalg::LinalgDialect"];
}

def LmcOutlineLoopNests : Pass<"lmc-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Moves each top-level loop nest of a function into its own";
  let description = [{
    On buffers and loops (after `convert-linalg-to-loops`), every `scf.for`
    or `scf.parallel` nest without results in the entry block of a defined
    function becomes a private
    function `<caller>_loop<N>` tagged `lmc.outlined`, called once in its
    place. LLVM's -O3 is superlinear in function size (ScalarEvolution walks
    the chain of a step's hundreds of loop nests): outlined, the benchmark
    GPT compiles in seconds instead of minutes. The emitter gives outlined
    functions internal linkage and `noinline`.

    What a nest reads from its caller becomes an argument, except constants
    and memref views (`expand_shape`, `collapse_shape`, `subview`, casts,
    `get_global`), which are cloned in with their operands: arguments are
    then scalars and identity-layout buffers, as the bare-pointer calling
    convention needs, each passed once. A buffer the caller allocated, or
    one of the caller's own buffer arguments (the runtime passes every
    tensor of a step in a buffer of its own), is `llvm.noalias` unless
    another argument views it, which spares the vectorizer runtime alias
    checks and lets lmc-hoist-invariant-loads move a hyperparameter's read
    out of the optimizer's loops. Nests that read a strided buffer
    that is not a view stay where they are.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def LmcHoistInvariantLoads
    : Pass<"lmc-hoist-invariant-loads", "::mlir::ModuleOp"> {
  let summary = "Reads a load an outlined loop repeats once, before the loop";
  let description = [{
    After `lmc-outline-loop-nests`, in each outlined function: a
    `memref.load` directly in an `scf.for` body, whose buffer and indices
    are defined outside the loop, moves to just before the loop when the
    loop runs at least once (constant bounds), has no memory effects but
    loads and stores, and none of its stores can write the loaded buffer:
    every stored buffer (through views) is another buffer than the loaded
    one and one of the two is an `llvm.noalias` argument, or the loaded
    buffer is a constant global. Innermost loops first, so a load can leave
    several. An embedding gather's row index is then read once per row,
    and LLVM vectorizes the row's columns; it could not hoist the load
    itself, the noalias arguments being lost when OpenMP outlines the
    parallel body. Values do not change.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def LmcProfileRegions : Pass<"lmc-profile-regions", "::mlir::ModuleOp"> {
  let summary = "Times each loop nest and runtime call of a step (--profile)";
  let description = [{
    After `lmc-outline-loop-nests`, every call in a step function (a defined
    function that is not itself an outlined nest) to an outlined loop nest
    or to a runtime function (`lmc_rt_*`: BLAS matmuls, collectives) is
    bracketed by `lmc_rt_profile_begin() -> i64` and
    `lmc_rt_profile_end(region : i64, begin : i64)`. The runtime times the
    regions only when the executable runs with `--profile`; otherwise each
    bracket is a load and a branch. The module attribute
    `lmc.profile_regions` lists, by region number, the calling function,
    the kind (`loop`, or the runtime function without its `lmc_rt_`
    prefix) and a label from the call's location: the ONNX node names (or
    DSL file:line:col) of the ops lowered into it, marked `(backward)` for
    the gradient code lmc-autodiff built; the descriptor's `profile` lines
    carry it to the runtime.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // LMC_LOWERING_PASSES_TD
