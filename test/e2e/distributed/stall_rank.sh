#!/bin/sh
# stall_rank.sh SIGNAL SECONDS PROGRAM [ARGS...]: runs PROGRAM; on process 1
# of an Open MPI job, sends it SIGNAL after SECONDS, and again every second
# while it lives (a stopped process that something continues is stopped
# again, so the "hang" lasts).
signal=$1 delay=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
  (sleep "$delay" && while kill -s "$signal" $$ 2>/dev/null; do sleep 1; done) &
fi
exec "$@"
