// RUN: not lmc-opt %s -lmc-mixed-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=ENUM
// RUN: not lmc-opt %s -lmc-mixed-precision="precision=bf16 keep-f32=fc(" 2>&1 | FileCheck %s --check-prefix=REGEX

// The precision option is an enumeration (lmc::Precision): f32, bf16, f16.
// ENUM: for the --precision option: Cannot find option named 'fp8'!
module {
}
// REGEX: error: invalid keep-f32 regex 'fc(': parentheses not balanced
