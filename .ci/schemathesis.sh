#!/usr/bin/env bash
# schemathesis (v4) against the REST API's /openapi.json, every check: zero 5xx, no schema
# violations. Starts `membank api` on a fresh temporary store with a key of its own, runs a
# bounded number of examples per operation, and stops the server whatever happens. A request
# may take 60 s (an entry write embeds on low-priority threads: >10 s seen on a loaded machine).
# The stateful phase follows the document's links (memory/api/openapi.py LINKS, plus the CI's
# stand-in links of .ci/schemathesis_links.py: a bank id as a user id, so chains start at the
# user routes) and says at the end how many it walked. Revoking a key is left out: the stateful phase finds the run's own key id (GET /keys) and
# would revoke it, so every later call is a 401 (tests/api/test_api_scopes.py covers it).
set -euo pipefail
cd "$(dirname "$0")/.."
EXAMPLES=${SCHEMATHESIS_EXAMPLES:-8}
work=$(mktemp -d)
export MEMBANK_URI="$work/db" MEMBANK_BLOCK_MODEL_REQUESTS=1 LITELLM_LOCAL_MODEL_COST_MAP=True
export PREFECT_SERVER_ANALYTICS_ENABLED=false DEEPEVAL_TELEMETRY_OPT_OUT=YES
pid=""
finish() {
    if [ -n "$pid" ]; then
        kill -INT "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap finish EXIT
key=$(.venv/bin/membank keys create --account schemathesis --json \
    | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["key"])')
port=$(.venv/bin/python -c \
    'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.venv/bin/membank api --port "$port" >"$work/server.log" 2>&1 &
pid=$!
status=0
# the served document (waiting up to 120 s for the server) with the CI's links added
.venv/bin/python .ci/schemathesis_links.py "http://127.0.0.1:$port/openapi.json" >"$work/openapi.json"
timeout 600 .venv/bin/schemathesis --config-file .ci/schemathesis.toml run "$work/openapi.json" \
    --url "http://127.0.0.1:$port" --request-timeout 60 --checks all --max-examples "$EXAMPLES" --seed 1 \
    --generation-database none --no-color \
    --exclude-operation-id revoke_key_keys__key_id__delete \
    -H "X-API-Key: $key" -H "Seclai-Version: 2026-08-03" | tee "$work/report.txt" \
    || status=$?
# how many of the OpenAPI links (create -> read -> change, job start -> job) were walked
grep -m1 "API Links:" "$work/report.txt" | sed 's/^ */stateful: /' || true
if [ "$status" -ne 0 ]; then
    echo "schemathesis failed (exit $status); server log:" >&2
    tail -n 50 "$work/server.log" >&2
fi
exit "$status"
