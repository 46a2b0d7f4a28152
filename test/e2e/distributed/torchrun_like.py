"""Starts N copies of a command as torchrun starts its workers: each with
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(a free port on 127.0.0.1), for tests on machines without torchrun.

    torchrun_like.py -n N [--signal KILL|STOP --rank R --after S]
                     [--missing R] -- COMMAND...

Rank 0's output passes through; the others' goes to /dev/null. Like
torchrun, a worker that fails makes it stop the others (SIGTERM) and exit
1. With --signal, worker R gets the signal after S seconds and the others
are left to notice by themselves: the script prints each other worker's
exit status and the seconds it took to exit after the signal, then kills
worker R (stopped, it would wait forever) and exits 0. With --missing,
worker R is never started (a node that did not come up).
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, required=True)
    parser.add_argument("--signal", choices=["KILL", "STOP"])
    parser.add_argument("--rank", type=int, default=1)
    parser.add_argument("--after", type=float, default=2.0)
    parser.add_argument("--missing", type=int)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    command = o.command[1:] if o.command[:1] == ["--"] else o.command
    port = str(free_port())
    workers = []
    for rank in range(o.n):
        if rank == o.missing:
            workers.append(subprocess.Popen(["true"]))
            continue
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                   WORLD_SIZE=str(o.n), LOCAL_WORLD_SIZE=str(o.n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        out = None if rank == 0 else subprocess.DEVNULL
        workers.append(subprocess.Popen(command, env=env, stdout=out))
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
    pending = set(range(o.n))
    while pending:
        for rank in list(pending):
            status = workers[rank].poll()
            if status is None:
                continue
            pending.discard(rank)
            if status != 0:
                for other in pending:
                    workers[other].send_signal(signal.SIGTERM)
                for other in pending:
                    workers[other].wait()
                return 1
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())
