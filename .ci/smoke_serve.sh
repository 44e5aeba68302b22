#!/usr/bin/env bash
# Smoke test of `membank serve`: start it on a free port with a temporary PREFECT_HOME and
# storage, run the compaction deployment once, check its effect on a bank, then stop
# everything with SIGINT by process group and check no Prefect process is left.
# Usage: .ci/smoke_serve.sh   (after `make install`; MEMBANK / PYTHON: other executable paths)
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBANK=${MEMBANK:-.venv/bin/membank}
PYTHON=${PYTHON:-.venv/bin/python}
work=$(mktemp -d)
export PREFECT_HOME="$work/prefect" MEMBANK_URI="$work/db"
export PREFECT_SERVER_ANALYTICS_ENABLED=false LITELLM_LOCAL_MODEL_COST_MAP=True
port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
serve_pid=""
groups=""

log() { echo "smoke_serve: $*"; }

cleanup() {
    local code=$?
    if [[ -n "$serve_pid" ]] && kill -0 -- "-$serve_pid" 2>/dev/null; then
        kill -INT -- "-$serve_pid" 2>/dev/null || true
        sleep 20
        kill -KILL -- "-$serve_pid" 2>/dev/null || true
    fi
    for g in $groups; do kill -KILL -- "-$g" 2>/dev/null || true; done
    if [[ $code -ne 0 && -f "$work/serve.log" ]]; then
        log "serve output:"; tail -n 60 "$work/serve.log" || true
        log "server log:"; tail -n 30 "$PREFECT_HOME/membank-serve-server.log" 2>/dev/null || true
    fi
    rm -rf "$work"
    exit $code
}
trap cleanup EXIT

log "a bank over its max_turns threshold (written before the threshold was set)"
"$PYTHON" - <<'PY'
from memory import banks, entries
from memory.wiring import open_context
from memory.models import BankCreate, BankUpdate, EntryIn

ctx = open_context()
bank = banks.create(ctx, BankCreate(name="smoke", type="conversation", compaction_prompt="Keep facts."))
turns = [EntryIn(key="c1", speaker="ana", content=f"Order #{100 + i} ships on May {i + 1}.") for i in range(8)]
entries.write(ctx, bank, turns)
banks.update(ctx, "smoke", BankUpdate(max_turns=4))
assert len(entries.load(ctx, bank, "c1")) == 8
PY

log "starting membank serve on 127.0.0.1:$port"
setsid "$MEMBANK" serve --port "$port" >"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 1 400); do
    grep -q "membank serve: ready" "$work/serve.log" && break
    kill -0 "$serve_pid" 2>/dev/null || { log "membank serve exited early"; exit 1; }
    sleep 1
done
grep -q "membank serve: ready" "$work/serve.log" || { log "membank serve never got ready"; exit 1; }
groups=$("$PYTHON" -c 'import json, os; print(" ".join(map(str, json.load(open(os.environ["PREFECT_HOME"] + "/membank-serve.json"))["groups"])))')
log "ready; Prefect process groups: $groups"

log "running the compaction deployment once"
PREFECT_API_URL="http://127.0.0.1:$port/api" "$PYTHON" - <<'PY'
import asyncio

from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment


async def main() -> None:
    run = await run_deployment("membank-compaction-sweep/hourly", timeout=900, poll_interval=2)
    assert run.state is not None and run.state.is_completed(), f"flow run ended {run.state}"
    print(f"flow run {run.name}: {run.state.name}")


asyncio.run(main())
PY

log "checking the bank was compacted"
"$PYTHON" - <<'PY'
from memory import banks, entries, purge
from memory.wiring import open_context

ctx = open_context()
bank = banks.get(ctx, "smoke")
assert not purge.pending_deletions(ctx, bank), "the sweep left deletions unpruned"
thread = entries.load(ctx, bank, "c1")
kinds = [e.kind for e in thread]
assert kinds.count("summary") == 1 and len(thread) <= 4, kinds
assert bank.summary_count == 1 and bank.last_compaction_at is not None, bank
print(f"partition c1: {len(thread)} entries, summary: {thread[0].content.splitlines()[0]}")
PY

log "stopping membank serve with SIGINT to its process group"
kill -INT -- "-$serve_pid"
for _ in $(seq 1 90); do kill -0 "$serve_pid" 2>/dev/null || break; sleep 1; done
if kill -0 "$serve_pid" 2>/dev/null; then log "membank serve did not stop"; exit 1; fi
wait "$serve_pid" || { log "membank serve exited with an error"; exit 1; }
serve_pid=""
for g in $groups; do
    if kill -0 -- "-$g" 2>/dev/null; then log "process group $g is still running"; exit 1; fi
done
grep -q "membank serve: stopped" "$work/serve.log"
log "ok"
