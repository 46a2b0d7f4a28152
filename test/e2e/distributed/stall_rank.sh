#!/bin/sh
# stall_rank.sh SIGNAL SECONDS PROGRAM [ARGS...]: runs PROGRAM; on process 1
# of an Open MPI job, sends it SIGNAL after SECONDS.
signal=$1 delay=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then
  (sleep "$delay" && kill -s "$signal" $$) &
fi
exec "$@"
