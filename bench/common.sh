# Sourced by the bench scripts (ROOT set). The benchmark peers' virtual
# environment, PyTorch and ONNX from PyPI (never a test dependency),
# created on first use at build/bench-venv or $LMC_BENCH_VENV: sets VENV
# and PY; `bench_pip_need MODULE PACKAGES...` adds what a script needs
# beyond those. `bench_token_shard DIR` writes DIR/train.bin, the token
# shard the GPT-2 runs train on; `bench_gpt2_export OUTPUT [ARGS...]`
# exports examples/gpt2 at $SIZE and $CONTEXT to OUTPUT unless it exists.
VENV=${LMC_BENCH_VENV:-$ROOT/build/bench-venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q torch onnx onnxscript numpy
fi
PY=$VENV/bin/python
bench_pip_need() { # MODULE PACKAGES...: installs PACKAGES unless MODULE imports
  local module=$1; shift
  "$PY" -c "import $module" 2> /dev/null || "$VENV/bin/pip" install -q "$@"
}
bench_token_shard() { # DIR: this repository's docs as byte-level tokens
  cat "$ROOT"/docs/*.md "$ROOT/README.md" > "$1/text.txt"
  python3 "$ROOT/scripts/text_to_tokens.py" "$1/text.txt" "$1/train.bin" > /dev/null
}
bench_gpt2_export() { # OUTPUT [export.py overrides...]
  local out=$1; shift
  [ -f "$out" ] || "$PY" "$ROOT/examples/gpt2/export.py" --size "$SIZE" \
    --context "$CONTEXT" -o "$out" "$@" > /dev/null 2>&1
}
