// Diagnostics of lmc-shard-annotate: the --mesh and --shard the user wrote.
// RUN: split-file %s %t
// RUN: lmc-opt %t/mesh-axis.mlir -lmc-shard-annotate="mesh=data=2,pipe=2" -verify-diagnostics
// RUN: lmc-opt %t/mesh-size.mlir -lmc-shard-annotate="mesh=model=0" -verify-diagnostics
// RUN: lmc-opt %t/mesh-twice.mlir -lmc-shard-annotate="mesh=model=2,model=2" -verify-diagnostics
// RUN: lmc-opt %t/no-mesh.mlir -lmc-shard-annotate="shard=w=_" -verify-diagnostics
// RUN: lmc-opt %t/rule-syntax.mlir -lmc-shard-annotate="mesh=model=2 shard=w" -verify-diagnostics
// RUN: lmc-opt %t/rule-axis.mlir -lmc-shard-annotate="mesh=model=2 shard=w=pipe,_" -verify-diagnostics
// RUN: lmc-opt %t/rule-data.mlir -lmc-shard-annotate="mesh=data=2,model=2 shard=w=data,_" -verify-diagnostics
// RUN: lmc-opt %t/rule-twice.mlir -lmc-shard-annotate="mesh=model=2 shard=w=model,model" -verify-diagnostics
// RUN: lmc-opt %t/rule-unused.mlir -lmc-shard-annotate="mesh=model=2 shard=v=model,_" -verify-diagnostics
// RUN: lmc-opt %t/rule-rank.mlir -lmc-shard-annotate="mesh=model=2 shard=w=model" -verify-diagnostics
// RUN: lmc-opt %t/indivisible.mlir -lmc-shard-annotate="mesh=model=4 shard=w=model,_" -verify-diagnostics

//--- mesh-axis.mlir
// expected-error @below {{--mesh 'data=2,pipe=2': expected data=N and/or model=M (N, M >= 1), got 'pipe=2'}}
module {}

//--- mesh-size.mlir
// expected-error @below {{--mesh 'model=0': expected data=N and/or model=M (N, M >= 1), got 'model=0'}}
module {}

//--- mesh-twice.mlir
// expected-error @below {{--mesh 'model=2,model=2' names 'model' twice}}
module {}

//--- no-mesh.mlir
// expected-error @below {{--shard needs a --mesh with the axes it names}}
module {}

//--- rule-syntax.mlir
// expected-error @below {{--shard 'w': expected GLOB=AXES, e.g. '*.fc1.weight=model,_'}}
module {}

//--- rule-axis.mlir
// expected-error @below {{--shard 'w=pipe,_': 'pipe' is neither '_' nor 'model'}}
module {}

//--- rule-data.mlir
// expected-error @below {{--shard 'w=data,_': parameters are replicated over 'data' (data parallelism); split them over 'model'}}
module {}

//--- rule-twice.mlir
// expected-error @below {{--shard 'w=model,model' splits two dimensions over 'model'}}
module {}

//--- rule-unused.mlir
// expected-error @below {{--shard 'v=model,_' matches no parameter}}
module {
  func.func @train_step(%w: tensor<6x4xf32> {lmc.name = "w", lmc.role = "param"}) -> tensor<6x4xf32> {
    return %w : tensor<6x4xf32>
  }
}

//--- rule-rank.mlir
module {
  func.func @train_step(
      // expected-error @below {{--shard 'w=model' gives 1 dimensions for parameter 'w' of rank 2}}
      %w: tensor<6x4xf32> {lmc.name = "w", lmc.role = "param"}) -> tensor<6x4xf32> {
    return %w : tensor<6x4xf32>
  }
}

//--- indivisible.mlir
module {
  func.func @train_step(
      // expected-error @below {{parameter 'w': dimension 0 of size 6 does not divide over model=4}}
      %w: tensor<6x4xf32> {lmc.name = "w", lmc.role = "param"}) -> tensor<6x4xf32> {
    return %w : tensor<6x4xf32>
  }
}

