"""expect_job_failure.py SECONDS COMMAND [ARGS...]

Runs COMMAND (a whole mpirun job) and succeeds only when it exits with a
non-zero status within SECONDS; a job still running then is killed and
reported as a hang. Prints the job's output for FileCheck.
"""
import subprocess
import sys
import time


def main():
    limit = float(sys.argv[1])
    command = sys.argv[2:]
    start = time.monotonic()
    try:
        job = subprocess.run(command, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=limit)
    except subprocess.TimeoutExpired as e:
        sys.stdout.write((e.stdout or b"").decode(errors="replace"))
        sys.exit(f"error: the job still ran after {limit:g} s (it hangs)")
    elapsed = time.monotonic() - start
    sys.stdout.write(job.stdout.decode(errors="replace"))
    if job.returncode == 0:
        sys.exit("error: the job exited with status 0")
    print(f"job ended with status {job.returncode} after {elapsed:.1f} s")


if __name__ == "__main__":
    main()
