#!/bin/bash
# Usage: .ci/concurrency_loop.sh CHECKOUT [LOG_FOLDER]  (not run by .ci/run: about 15-25 min)
# 20 runs in a row of the concurrency tests (local: several processes writing, compacting and
# pruning one table; S3 on moto: two processes compacting one partition, writers + prunes)
cd "$1"
export LITELLM_LOCAL_MODEL_COST_MAP=True PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_HOME=$PWD/.prefect DEEPEVAL_TELEMETRY_OPT_OUT=YES
out=${2:-$(mktemp -d)}; mkdir -p "$out"; log=$out/loop.log
: > $log
echo "commit $(git rev-parse --short HEAD) start $(date -u +%T)" >> $log
for i in $(seq 20); do
  if ! .venv/bin/pytest tests/test_concurrency.py -q -x -p no:warnings > $out/local_$i.log 2>&1; then echo "local FAIL at run $i" >> $log; break; fi
  if ! .venv/bin/pytest tests/test_object_storage.py -q -x -p no:warnings -k "two_processes" > $out/s3_$i.log 2>&1; then echo "s3 FAIL at run $i" >> $log; break; fi
  echo "run $i ok $(date -u +%T)" >> $log
done
echo "done $(date -u +%T)" >> $log
cat "$log"
! grep -q FAIL "$log"
