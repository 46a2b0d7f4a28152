// RUN: lmc-opt %s -verify-diagnostics -lmc-mixed-precision=precision=fp8
// RUN: not lmc-opt %s -lmc-mixed-precision="precision=bf16 keep-f32=fc(" 2>&1 | FileCheck %s --check-prefix=REGEX

// expected-error @+1 {{unknown precision 'fp8'; expected f32, bf16 or f16}}
module {
}
// REGEX: error: invalid keep-f32 regex 'fc(': parentheses not balanced
