"""Starts N copies of a command as torchrun starts its workers: each with
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(a free port on 127.0.0.1), for tests on machines without torchrun.

    torchrun_like.py -n N [--agent-store [--max-restarts K] [--kill-when F]]
                     [--signal KILL|STOP --rank R --after S]
                     [--missing R] -- COMMAND...

Rank 0's output passes through; the others' goes to /dev/null. Like
torchrun, a worker that fails makes it stop the others (SIGTERM) and exit
1. With --signal, worker R gets the signal after S seconds and the others
are left to notice by themselves: the script prints each other worker's
exit status and the seconds it took to exit after the signal, then kills
worker R (stopped, it would wait forever) and exits 0. With --missing,
worker R is never started (a node that did not come up).

With --agent-store it behaves as torchrun 2.x does: the script serves a
c10d store on MASTER_PORT itself (c10d_store.py) and tells the workers
with TORCHELASTIC_USE_AGENT_STORE=True; each worker gets
TORCHELASTIC_RESTART_COUNT and its own TORCHELASTIC_ERROR_FILE. After a
failure it restarts all workers up to --max-restarts times (the store
kept), and at the end prints the root cause torchrun would: the first
failure's error file's message. --kill-when PATTERN kills worker R with
SIGKILL once a file matches the glob PATTERN (in the first attempt only).
"""
import argparse
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import c10d_store


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(o, command, port, attempt, error_dir):
    workers = []
    for rank in range(o.n):
        if rank == o.missing:
            workers.append(subprocess.Popen(["true"]))
            continue
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(o.n), LOCAL_WORLD_SIZE=str(o.n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        if o.agent_store:
            env.update(
                TORCHELASTIC_USE_AGENT_STORE="True",
                TORCHELASTIC_RESTART_COUNT=str(attempt),
                TORCHELASTIC_MAX_RESTARTS=str(o.max_restarts),
                TORCHELASTIC_RUN_ID="none",
                TORCHELASTIC_ERROR_FILE=os.path.join(
                    error_dir, f"attempt_{attempt}_rank_{rank}.json"))
        out = None if rank == 0 else subprocess.DEVNULL
        workers.append(subprocess.Popen(command, env=env, stdout=out))
    return workers


def watch(o, workers, attempt):
    """Waits for the workers; after a failure stops the others. Returns the
    failed ranks' exit statuses ({} when all succeeded)."""
    pending = set(range(o.n))
    killed = False
    while pending:
        if (o.kill_when and attempt == 0 and not killed
                and glob.glob(o.kill_when)):
            workers[o.rank].kill()
            killed = True
        for rank in list(pending):
            status = workers[rank].poll()
            if status is None:
                continue
            pending.discard(rank)
            if status != 0:
                for other in pending:
                    workers[other].send_signal(signal.SIGTERM)
                failed = {rank: status}
                for other in pending:
                    other_status = workers[other].wait()
                    if other_status != 0:
                        failed[other] = other_status
                return failed
        time.sleep(0.01)
    return {}


def root_cause(failed, attempt, error_dir):
    """torchrun's summary: the failure with the smallest timestamp in its
    error file, or the exit status of a worker that wrote none."""
    causes = []
    for rank, status in failed.items():
        path = os.path.join(error_dir, f"attempt_{attempt}_rank_{rank}.json")
        if os.path.exists(path):
            with open(path) as f:
                message = json.load(f)["message"]
            causes.append((int(message["extraInfo"]["timestamp"]), rank,
                           message["message"]))
        else:
            causes.append((sys.maxsize, rank, f"exitcode {status}"))
    _, rank, message = min(causes)
    return f"root cause: rank {rank}: {message}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, required=True)
    parser.add_argument("--signal", choices=["KILL", "STOP"])
    parser.add_argument("--rank", type=int, default=1)
    parser.add_argument("--after", type=float, default=2.0)
    parser.add_argument("--missing", type=int)
    parser.add_argument("--agent-store", action="store_true")
    parser.add_argument("--max-restarts", type=int, default=0)
    parser.add_argument("--kill-when")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    command = o.command[1:] if o.command[:1] == ["--"] else o.command
    store = c10d_store.Store() if o.agent_store else None
    port = store.port if store else free_port()
    error_dir = tempfile.mkdtemp(prefix="torchrun_like_errors_")
    workers = start(o, command, port, 0, error_dir)
    if o.signal:
        time.sleep(o.after)
        workers[o.rank].send_signal(getattr(signal, "SIG" + o.signal))
        sent = time.monotonic()
        for rank, w in enumerate(workers):
            if rank != o.rank:
                status = w.wait()
                print(f"rank {rank} exited with {status} after "
                      f"{time.monotonic() - sent:.1f} s", flush=True)
        workers[o.rank].kill()
        workers[o.rank].wait()
        return 0
    attempt = 0
    while True:
        failed = watch(o, workers, attempt)
        if not failed:
            return 0
        if o.agent_store:
            print(root_cause(failed, attempt, error_dir), flush=True)
        if attempt == o.max_restarts:
            return 1
        attempt += 1
        print(f"restarting the workers (restart {attempt} of "
              f"{o.max_restarts})", flush=True)
        workers = start(o, command, port, attempt, error_dir)


if __name__ == "__main__":
    sys.exit(main())
