#!/usr/bin/env bash
# Benchmarks of `plugboard serve` on loopback with wrk (Debian's package): the 304 path, full 100-flag answers,
# OFREP single evaluations, a CLI change reaching 100 streams, and, when serve-bare is built, serve against a bare
# Hummingbird route that answers the same bytes (compare_bare.py). Needs a release build:
#   swift build -c release --product plugboard && PLUGBOARD_SERVE_PEER=1 swift build -c release --product serve-bare \
#     && Tools/Benchmarks/serve/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${PLUGBOARD_BIN:-$here/../../../.build/release/plugboard}
work=$(mktemp -d "${TMPDIR:-/tmp}/plugboard-serve-bench.XXXXXX")
bare=${PLUGBOARD_SERVE_BARE:-$here/../../../.build/release/serve-bare}
bare_pid=
trap 'kill "$server" $bare_pid 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
board="$work/board.sqlite"

"$bin" init --db "$board" >/dev/null
# 100 flags: gradual rollouts with constraints, some with variants (about 30 KB of JSON).
python3 - "$work/features.json" <<'PY'
import json, sys
features = []
for i in range(100):
    feature = {"name": f"flag.{i:03d}", "enabled": True, "project": "default", "type": "release",
               "strategies": [{"name": "flexibleRollout", "parameters": {"rollout": str(i), "stickiness": "default", "groupId": f"flag.{i:03d}"},
                               "constraints": [{"contextName": "tenant", "operator": "IN", "values": ["acme", "globex", "initech"]}]}]}
    if i % 4 == 0:
        feature["variants"] = [{"name": "a", "weight": 500, "stickiness": "default", "payload": {"type": "string", "value": "A"}},
                               {"name": "b", "weight": 500, "stickiness": "default", "payload": {"type": "string", "value": "B"}}]
    features.append(feature)
json.dump({"version": 2, "features": features, "segments": []}, open(sys.argv[1], "w"))
PY
"$bin" flag import "$work/features.json" --db "$board" >/dev/null
"$bin" flag create bench.flag --db "$board" >/dev/null
token=$("$bin" token create --env default --name bench --json --db "$board" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

"$bin" serve --db "$board" --listen 127.0.0.1:0 --log-level warning >"$work/serve.out" 2>"$work/serve.err" &
server=$!
until grep -q "Serving" "$work/serve.out" 2>/dev/null; do sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.out" | head -1)
etag=$(curl -s -D - -o /dev/null -H "Authorization: $token" "$url/api/client/features" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
echo "server: $url  features body: $(curl -s -H "Authorization: $token" "$url/api/client/features" | wc -c) bytes  etag: $etag"

export PLUGBOARD_TOKEN="$token"
echo "== GET /api/client/features, If-None-Match matches (304), 64 connections"
PLUGBOARD_ETAG="$etag" wrk -t2 -c64 -d10s --latency -s "$here/features.lua" "$url/api/client/features"
echo "== GET /api/client/features, full 100-flag answer (200), 64 connections"
PLUGBOARD_ETAG="" wrk -t2 -c64 -d10s --latency -s "$here/features.lua" "$url/api/client/features"
echo "== POST /ofrep/v1/evaluate/flags/flag.050 (OFREP single), 64 connections"
wrk -t2 -c64 -d10s --latency -s "$here/ofrep.lua" "$url/ofrep/v1/evaluate/flags/flag.050"
if [ -x "$bare" ]; then
    curl -s -H "Authorization: $token" "$url/api/client/features" >"$work/body.json"
    "$bare" "$work/body.json" "$etag" >"$work/bare.out" &
    bare_pid=$!
    until grep -q "listening" "$work/bare.out" 2>/dev/null; do sleep 0.05; done
    python3 "$here/compare_bare.py" --serve "$url" --bare "http://127.0.0.1:$(awk '/listening/{print $2}' "$work/bare.out")" \
        --token "$token" --etag "$etag" --rounds "${PLUGBOARD_BARE_ROUNDS:-5}"
else
    echo "== serve against a bare route: skipped ($bare is not built)"
fi
echo "== a CLI change reaching 100 connected streams"
python3 "$here/stream_latency.py" --plugboard "$bin" --board "$board" --url "$url" --token "$token" --streams 100 --rounds 20
