#!/usr/bin/env bash
# End-to-end test of the runtime's main() with a hand-written fake model
# (fake_model.c: linear regression, MSE, SGD).
# Usage: run.sh BUILD_DIR    (needs python3 with numpy)
# Exits non-zero if any check fails and prints each failure.
set -u

BUILD_DIR=${1:?usage: run.sh BUILD_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TRAIN=$(cd "$BUILD_DIR" && pwd)/bin/lmc-fake-train
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

failures=0
passes=0
fail() {
  echo "FAIL: $1"
  [ -n "${2:-}" ] && sed 's/^/    | /' "$2"
  failures=$((failures + 1))
}
pass() { passes=$((passes + 1)); }

# expect_ok NAME CMD...: CMD exits 0; its output is kept in NAME.out.
expect_ok() {
  local name=$1; shift
  if "$@" >"$name.out" 2>&1; then pass; else fail "$name: exit $?" "$name.out"; fi
}

# expect_fail NAME RC SUBSTRING CMD...: CMD exits RC and prints SUBSTRING.
expect_fail() {
  local name=$1 rc=$2 want=$3; shift 3
  "$@" >"$name.out" 2>&1
  local got=$?
  if [ "$got" -ne "$rc" ]; then
    fail "$name: expected exit $rc, got $got" "$name.out"
  elif ! grep -qF -- "$want" "$name.out"; then
    fail "$name: output lacks '$want'" "$name.out"
  else
    pass
  fi
}

# expect_grep NAME SUBSTRING FILE
expect_grep() {
  if grep -qF -- "$2" "$3"; then pass; else fail "$1: '$2' not in $3" "$3"; fi
}

python3 "$HERE/make_data.py" "$WORK" || { echo "FAIL: make_data.py"; exit 1; }
DATA=(--input x=x.npy --input targets=y.npy)
EVAL=(--eval-input x=x_eval.npy --eval-input targets=y_eval.npy)

# --- help and info -----------------------------------------------------------
expect_ok help "$TRAIN" --help
expect_grep help "usage: lmc-fake-train" help.out
expect_ok info "$TRAIN" --info
for want in "w  f32[3, 1]  3" "total parameters: 4" "batch size: 4" \
            "x        f32[4, 3]" "loss: mse" "optimizer: sgd" "lr=0.05" \
            "flops per step: 96"; do
  expect_grep info "$want" info.out
done

# --- training converges to the closed-form solution --------------------------
expect_ok train "$TRAIN" "${DATA[@]}" "${EVAL[@]}" --steps 1500 --lr 0.1 \
  --log-every 500 --eval-every 1000 --metrics m.jsonl --save out.safetensors
expect_grep train "step    1/1500 | loss " train.out
expect_grep train "step 1500/1500 | loss 0.000000 | lr 1.000e-01" train.out
expect_grep train "eval: loss 0.000000" train.out
expect_grep train "saved parameters to out.safetensors" train.out
if [ "$(grep -c '^eval: ' train.out)" -ne 2 ]; then
  fail "train: expected 2 eval lines (step 1000 and the end)" train.out
else pass; fi
python3 "$HERE/check_outputs.py" save out.safetensors solution.npy 1e-3 \
  >save.out 2>&1 && pass || fail "save: params vs closed form" save.out
python3 "$HERE/check_outputs.py" metrics m.jsonl >metrics.out 2>&1 && pass \
  || fail "metrics: JSONL" metrics.out
ls out.safetensors.tmp.* >/dev/null 2>&1 && fail "save: temp file left" || pass

# A format-2.0 .npy reads the same.
expect_ok npy_v2 "$TRAIN" --input x=x_v2.npy --input targets=y.npy --steps 3
expect_ok npy_v1 "$TRAIN" --input x=x.npy --input targets=y.npy --steps 3
diff <(grep -o 'loss [0-9.]*' npy_v1.out) <(grep -o 'loss [0-9.]*' npy_v2.out) \
  >/dev/null && pass || fail "npy v2: different losses than v1" npy_v2.out

# --- --init ------------------------------------------------------------------
# Zero steps: the saved params are exactly the loaded ones.
expect_ok init_roundtrip "$TRAIN" "${DATA[@]}" --steps 0 --init out.safetensors \
  --save again.safetensors
python3 "$HERE/check_outputs.py" same out.safetensors again.safetensors \
  >same.out 2>&1 && pass || fail "init: roundtrip changed params" same.out
expect_ok init_python "$TRAIN" "${DATA[@]}" --steps 0 \
  --init init_good.safetensors --save from_python.safetensors
python3 "$HERE/check_outputs.py" values from_python.safetensors 1 2 3 4 \
  >values.out 2>&1 && pass || fail "init: python-written values" values.out
# Starting from the solution, the first step's loss is already ~0.
expect_ok init_converged "$TRAIN" "${DATA[@]}" --steps 1 --init out.safetensors
expect_grep init_converged "loss 0.000000" init_converged.out

# --- shuffle is deterministic --------------------------------------------------
for run in a b; do
  expect_ok "shuffle_$run" "$TRAIN" "${DATA[@]}" --steps 40 --log-every 1 \
    --shuffle --seed 7
done
expect_ok shuffle_c "$TRAIN" "${DATA[@]}" --steps 40 --log-every 1 --shuffle \
  --seed 8
losses() { grep -o 'loss [0-9.]*' "$1"; }
diff <(losses shuffle_a.out) <(losses shuffle_b.out) >/dev/null && pass \
  || fail "shuffle: same seed gave different losses"
diff <(losses shuffle_a.out) <(losses shuffle_c.out) >/dev/null \
  && fail "shuffle: different seeds gave identical losses" || pass

# --- usage errors (exit 2) ------------------------------------------------------
expect_fail unknown_flag 2 "unknown flag '--bogus'" "$TRAIN" --bogus
expect_fail bad_steps 2 "--steps expects an integer" "$TRAIN" --steps abc
expect_fail bad_lr 2 "--lr expects a non-negative number" "$TRAIN" --lr -1
expect_fail no_split 1 "--grad-accum needs a model with grad_step/apply_step" \
  "$TRAIN" "${DATA[@]}" --grad-accum 2
expect_grep info "gradient accumulation and data parallelism: no" info.out
expect_fail bad_input_spec 2 "expects NAME=FILE" "$TRAIN" --input x.npy
# The hand-written model times nothing (no lmc-profile-regions brackets).
expect_fail no_profile_regions 2 "this executable has none to time" \
  "$TRAIN" "${DATA[@]}" --profile

# --- runtime errors (exit 1) ----------------------------------------------------
expect_fail missing_input 1 "missing --input targets=FILE.npy" \
  "$TRAIN" --input x=x.npy
expect_fail unknown_input 1 "the model has no such input" \
  "$TRAIN" "${DATA[@]}" --input z=x.npy
expect_fail no_file 1 "cannot open 'nope.npy': No such file or directory" \
  "$TRAIN" --input x=nope.npy --input targets=y.npy
expect_fail wrong_dtype 1 "x_f64.npy: dtype f64 does not match model input 'x'" \
  "$TRAIN" --input x=x_f64.npy --input targets=y.npy
expect_fail wrong_shape 1 "x_badshape.npy: shape [64, 2] does not match" \
  "$TRAIN" --input x=x_badshape.npy --input targets=y.npy
expect_fail sample_count 1 "y_short.npy has 32 samples but x.npy has 64" \
  "$TRAIN" --input x=x.npy --input targets=y_short.npy
expect_fail npy_magic 1 "bad_magic.npy: not a .npy file (bad magic)" \
  "$TRAIN" --input x=bad_magic.npy --input targets=y.npy
expect_fail npy_version 1 "bad_version.npy: unsupported .npy format version 7.0" \
  "$TRAIN" --input x=bad_version.npy --input targets=y.npy
expect_fail npy_truncated 1 "truncated.npy: truncated data" \
  "$TRAIN" --input x=truncated.npy --input targets=y.npy
expect_fail npy_fortran 1 "x_fortran.npy: fortran_order arrays are not supported" \
  "$TRAIN" --input x=x_fortran.npy --input targets=y.npy
expect_fail npy_object 1 "x_object.npy: object arrays" \
  "$TRAIN" --input x=x_object.npy --input targets=y.npy
expect_fail nan_loss 1 "at step" "$TRAIN" "${DATA[@]}" --lr 1e30 --steps 50
expect_fail init_missing 1 "init_missing.safetensors: no tensor for 1 of the model's 2 ('b'); names match exactly or as a suffix at a '.'" \
  "$TRAIN" "${DATA[@]}" --init init_missing.safetensors
expect_fail init_shape 1 "parameter 'w' has shape [1, 3], the model expects [3, 1]" \
  "$TRAIN" "${DATA[@]}" --init init_shape.safetensors
expect_fail init_dtype 1 "parameter 'w' has dtype F64, the model expects F32" \
  "$TRAIN" "${DATA[@]}" --init init_dtype.safetensors
expect_fail st_badjson 1 "st_badjson.safetensors: invalid JSON" \
  "$TRAIN" "${DATA[@]}" --init st_badjson.safetensors
expect_fail st_huge_header 1 "exceeds the 100000000-byte limit" \
  "$TRAIN" "${DATA[@]}" --init st_huge_header.safetensors
expect_fail st_past_end 1 "is beyond the end of the file" \
  "$TRAIN" "${DATA[@]}" --init st_past_end.safetensors
expect_fail st_dup 1 'duplicate key "w"' \
  "$TRAIN" "${DATA[@]}" --init st_dup.safetensors
expect_fail st_overlap 1 "overlap" \
  "$TRAIN" "${DATA[@]}" --init st_overlap.safetensors
expect_fail st_bytes 1 "F32 [3, 2] needs 24 bytes but data_offsets span 12" \
  "$TRAIN" "${DATA[@]}" --init st_bytes.safetensors
expect_fail save_dir 1 "cannot create 'no/such/dir/p.safetensors.tmp." \
  "$TRAIN" "${DATA[@]}" --steps 1 --save no/such/dir/p.safetensors
expect_fail eval_every_alone 1 "--eval-every needs --eval-input" \
  "$TRAIN" "${DATA[@]}" --eval-every 5

# Every error is exactly one line starting with "error: ".
for f in missing_input npy_magic st_dup nan_loss; do
  if [ "$(grep -c '^error: ' "$f.out")" -ne 1 ]; then
    fail "$f: expected exactly one 'error:' line" "$f.out"
  else pass; fi
done

echo "runtime e2e: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
