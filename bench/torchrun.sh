#!/usr/bin/env bash
# lmc's training executable under the real torchrun (PyTorch from PyPI in
# the benchmark venv; CI runs the same cases against a stand-in,
# test/e2e/distributed/torchrun-agent.test). Every case prints its command
# and the lines that show its result; the script stops at the first case
# that fails.
#
#   bash bench/torchrun.sh
#
# 1. The stand-in store (c10d_store.py) answers PyTorch's own TCPStore
#    client as PyTorch's server does.
# 2. torchrun --nproc_per_node 2: equal to mpirun -np 2 bit for bit.
# 3. Two torchrun "nodes" on this machine, c10d rendezvous: the same.
# 4. torchrun --max-restarts 1 with a worker killed (SIGKILL) once the
#    first checkpoint exists: the restarted job resumes by itself and
#    ends with the uninterrupted run's losses and parameters, bit for bit.
# 5. A worker error: torchrun's summary names it (TORCHELASTIC_ERROR_FILE).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK:-$ROOT/build/bench-torchrun}
rm -rf "$WORK" && mkdir -p "$WORK"
source "$ROOT/bench/common.sh"
TORCHRUN=$VENV/bin/torchrun
export PATH=$ROOT/build/bin:$PATH
DIGITS=$ROOT/examples/mlp-digits
DATA=(--input "x=$DIGITS/data/train_x.npy"
      --input "labels=$DIGITS/data/train_labels.npy"
      --shuffle --seed 5 --threads 1)
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
show() { echo "\$ $*" | sed "s|$WORK|\$WORK|g; s|$ROOT|.|g"; }
same() { # A.jsonl B.jsonl A.safetensors B.safetensors
  python3 "$ROOT/test/e2e/training/compare.py" same-losses "$1" "$2" --rtol 0
  cmp "$3" "$4" && echo "parameters identical: $(basename "$3") $(basename "$4")"
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

"$PY" -c 'import torch; print("torch", torch.__version__)'
lmc "$DIGITS/mlp.onnx" --batch 8 --optimizer adamw --weight-decay 0.01 \
  --clip-grad-norm 1 -o "$WORK/train" > /dev/null

echo "== 1. the stand-in store against PyTorch's TCPStore client"
(cd "$ROOT/test/e2e/distributed" && "$PY" - <<'EOF'
import datetime, threading, time
import torch.distributed as dist
import c10d_store
store = c10d_store.Store()
timeout = datetime.timedelta(seconds=3)
a = dist.TCPStore("127.0.0.1", store.port, 1, False, timeout=timeout)
b = dist.TCPStore("127.0.0.1", store.port, 1, False, timeout=timeout)
a.set("k", "v")
assert b.get("k") == b"v"
assert (a.add("n", 5), b.add("n", 2)) == (5, 7)
assert a.check(["k"]) and not a.check(["absent"])
threading.Thread(target=lambda: (time.sleep(0.3), b.set("late", "x"))).start()
a.wait(["late"])
try:
    a.wait(["never"], datetime.timedelta(seconds=1))
    raise SystemExit("a wait for an unset key returned")
except dist.DistStoreError:
    pass
a.set("after-cancel", "ok")
assert a.get("after-cancel") == b"ok"
assert (a.compare_set("cs", "", "1"), a.compare_set("cs", "0", "2"),
        a.compare_set("cs", "1", "2")) == (b"1", b"1", b"2")
assert a.delete_key("cs") and not a.delete_key("cs")
print("set/get/add/check/wait/cancel/compare_set/delete_key: as PyTorch's server")
EOF
)

echo "== 2. torchrun --nproc_per_node 2 against mpirun -np 2"
RUN=(--steps 300 --log-every 100 "${DATA[@]}")
show "${MPIRUN[@]}" -np 2 "$WORK/train" "${RUN[@]}" --metrics "$WORK/mpi.jsonl"
"${MPIRUN[@]}" -np 2 "$WORK/train" "${RUN[@]}" --metrics "$WORK/mpi.jsonl" \
  --save "$WORK/mpi.safetensors" | tail -1
show "$TORCHRUN" --nproc_per_node 2 --no-python "$WORK/train" "${RUN[@]}"
"$TORCHRUN" --nproc_per_node 2 --no-python "$WORK/train" "${RUN[@]}" \
  --metrics "$WORK/single.jsonl" --save "$WORK/single.safetensors" 2>&1 |
  grep -v '^W.*run.py\|\*\*\*\*' | tail -2
same "$WORK/single.jsonl" "$WORK/mpi.jsonl" "$WORK/single.safetensors" \
  "$WORK/mpi.safetensors"

echo "== 3. two torchrun nodes on this machine, c10d rendezvous"
PORT=$(free_port)
NODE=(--nnodes 2 --nproc_per_node 1 --rdzv-backend c10d
      --rdzv-endpoint "127.0.0.1:$PORT" --rdzv-id lmc-bench --no-python)
show "$TORCHRUN" "${NODE[@]}" "$WORK/train" "${RUN[@]}" "(twice, at once)"
"$TORCHRUN" "${NODE[@]}" "$WORK/train" "${RUN[@]}" \
  --metrics "$WORK/node-a.jsonl" --save "$WORK/node-a.safetensors" \
  > "$WORK/node-a.out" 2>&1 &
A=$!
"$TORCHRUN" "${NODE[@]}" "$WORK/train" "${RUN[@]}" \
  --metrics "$WORK/node-b.jsonl" --save "$WORK/node-b.safetensors" \
  > "$WORK/node-b.out" 2>&1
wait $A
# The node whose worker became rank 0 wrote the files.
for n in a b; do
  [ -f "$WORK/node-$n.safetensors" ] && same "$WORK/node-$n.jsonl" \
    "$WORK/mpi.jsonl" "$WORK/node-$n.safetensors" "$WORK/mpi.safetensors"
done

echo "== 4. torchrun --max-restarts 1, a worker killed mid-run"
# Every step logged: a resumed run logs its first step whatever the period.
LONG=(--steps 3000 --log-every 1 "${DATA[@]}" --checkpoint-every 10 --keep 2)
"$TORCHRUN" --nproc_per_node 2 --no-python "$WORK/train" "${LONG[@]}" \
  --checkpoint-dir "$WORK/whole-ck" --metrics "$WORK/whole.jsonl" \
  --save "$WORK/whole.safetensors" > /dev/null 2>&1
show "$TORCHRUN" --nproc_per_node 2 --max-restarts 1 --no-python \
  "$WORK/train" "${LONG[@]}" --checkpoint-dir "$WORK/ck"
"$TORCHRUN" --nproc_per_node 2 --max-restarts 1 --no-python "$WORK/train" \
  "${LONG[@]}" --checkpoint-dir "$WORK/ck" --metrics "$WORK/restarted.jsonl" \
  --save "$WORK/restarted.safetensors" > "$WORK/restarted.out" 2>&1 &
JOB=$!
until compgen -G "$WORK/ck/step_*.safetensors" > /dev/null; do sleep 0.01; done
for pid in $(pgrep -f "$WORK/train"); do
  if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'RANK=1'; then
    kill -KILL "$pid" && echo "killed rank 1 (pid $pid)"
  fi
done
wait $JOB
grep -E 'resuming|Restarting|restart|step 3000/' "$WORK/restarted.out" |
  sed 's/^.*\] //' | head -5
same "$WORK/restarted.jsonl" "$WORK/whole.jsonl" \
  "$WORK/restarted.safetensors" "$WORK/whole.safetensors"

echo "== 5. a worker error in torchrun's summary"
show "$TORCHRUN" --nproc_per_node 2 --no-python "$WORK/train" --input x=missing.npy ...
if "$TORCHRUN" --nproc_per_node 2 --no-python "$WORK/train" \
    --input x=missing.npy --input labels=missing.npy --steps 1 \
    > "$WORK/error.out" 2>&1; then
  echo "a run without its data succeeded"; exit 1
fi
grep -A8 'Root Cause' "$WORK/error.out"
grep -q "traceback : cannot open 'missing.npy'" "$WORK/error.out" ||
  { echo "torchrun's summary does not name the error"; exit 1; }
echo "all torchrun cases passed"
