"""with_slurm.py DIR -- COMMAND...: runs COMMAND (with SLURM_CONF set) on a
one-node Slurm cluster of this machine that it starts in DIR and stops
afterwards: munged on its own socket and key, slurmctld and slurmd on free
ports in the foreground (Debian's slurm-wlm and munge; run as root, as
slurmd must be). The node has this machine's cores; tasks may share them
(OverSubscribe), as mpirun --oversubscribe does.

    with_slurm.py DIR -- srun -N1 -n2 ./train ...
"""
import os
import shutil
import socket
import subprocess
import sys
import time

from torchrun_like import free_port


def wait_for(what, ready, seconds, logs):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.2)
    for log in logs:
        if os.path.exists(log):
            with open(log) as f:
                sys.stderr.write(f"--- {log}\n{f.read()[-2000:]}")
    sys.exit(f"with_slurm.py: {what} not ready within {seconds} s")


def main():
    if "--" not in sys.argv[2:3]:
        sys.exit(__doc__)
    root, command = os.path.abspath(sys.argv[1]), sys.argv[3:]
    for tool in ("munged", "slurmctld", "slurmd", "sinfo"):
        if not shutil.which(tool, path=os.environ["PATH"] + ":/usr/sbin"):
            sys.exit(f"with_slurm.py: {tool} is missing "
                     "(scripts/install-deps.sh installs slurm-wlm and munge)")
    shutil.rmtree(root, ignore_errors=True)
    for sub in ("state", "spool", "log"):
        os.makedirs(os.path.join(root, sub))
    key = os.path.join(root, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o400)
    munge_socket = os.path.join(root, "munge.socket")
    node = socket.gethostname().split(".")[0]
    conf = os.path.join(root, "slurm.conf")
    with open(conf, "w") as f:
        f.write(f"""ClusterName=lmc-test
SlurmctldHost={node}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
NodeName={node} CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
""")
    env = dict(os.environ, SLURM_CONF=conf)
    sbin = "/usr/sbin/"
    daemons = []
    try:
        daemons.append(subprocess.Popen(
            [sbin + "munged", "--foreground", "--force",
             f"--socket={munge_socket}", f"--key-file={key}",
             f"--pid-file={root}/munged.pid", f"--log-file={root}/log/munged.log",
             f"--seed-file={root}/munged.seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for("munged", lambda: os.path.exists(munge_socket), 20,
                 [f"{root}/log/munged.log"])
        for daemon in ("slurmctld", "slurmd"):
            daemons.append(subprocess.Popen(
                [sbin + daemon, "-D", "-f", conf], env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        logs = [f"{root}/log/slurmctld.log", f"{root}/log/slurmd.log"]

        def idle():
            states = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env,
                                    capture_output=True, text=True).stdout
            return states.strip() == "idle"
        wait_for("the Slurm node", idle, 60, logs)
        return subprocess.run(command, env=env).returncode
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


if __name__ == "__main__":
    sys.exit(main())
