#!/bin/bash
# Usage: .ci/concurrency_loop.sh CHECKOUT [LOG_FOLDER] [RUNS]  (not run by .ci/run: ~5 min a run)
# RUNS (default 10) runs in a row of the concurrency tests: local (several processes writing,
# compacting and pruning one table), S3 on moto (two processes compacting one partition,
# writers + prunes), and leases from a real Prefect server (tests/test_leases.py: kill -9 of a
# lease holder mid-compaction and mid-prune on S3, its lease lapses, another process finishes:
# 0 lost entries, 0 double summaries, no deleted text in any object).
cd "$1"
export LITELLM_LOCAL_MODEL_COST_MAP=True PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_HOME=$PWD/.prefect DEEPEVAL_TELEMETRY_OPT_OUT=YES
out=${2:-$(mktemp -d)}; mkdir -p "$out"; log=$out/loop.log
runs=${3:-10}
: > $log
echo "commit $(git rev-parse --short HEAD) start $(date -u +%T)" >> $log
for i in $(seq "$runs"); do
  if ! .venv/bin/pytest tests/test_concurrency.py -q -x -p no:warnings > $out/local_$i.log 2>&1; then echo "local FAIL at run $i" >> $log; break; fi
  if ! .venv/bin/pytest tests/test_object_storage.py -q -x -p no:warnings -k "two_processes" > $out/s3_$i.log 2>&1; then echo "s3 FAIL at run $i" >> $log; break; fi
  if ! .venv/bin/pytest tests/test_leases.py -q -x -p no:warnings > $out/leases_$i.log 2>&1; then echo "leases FAIL at run $i" >> $log; break; fi
  echo "run $i ok $(date -u +%T)" >> $log
done
echo "done $(date -u +%T)" >> $log
cat "$log"
! grep -q FAIL "$log"
