#!/usr/bin/env bash
# The newcomer path (issue 13), slow because of `npm ci`, so CI runs it once (.ci/run):
#  1. a fresh `git clone` of this repository's committed HEAD into a temp dir, `npm ci`;
#  2. the README's run command (the sh block of "## Run it", after `npm ci`) listening in
#     at most 3 s, then gone (port released) after SIGTERM;
#  3. `npx svc-gateway --help` in the clone, timed (it must not compile again);
#  4. test/readme-quickstart.test.ts inside the clone: the README quickstart verbatim and a
#     webhook to http://localhost:PORT with no config file (the laptop default).
# With --pack (CI passes it) it also packs the clone, installs the tarball into an empty
# project, times `npx svc-gateway --help` there and serves from it: the path of `npm install
# svc-gateway`, where every dependency's install script runs in a dependent project (an
# optional dependency's download once failed that install outright, unnoticed by the rest),
# and runs scripts/kit-fixtures.sh there: TypeScript plugins checked against the packed kits.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIMIT_MS=${NEWCOMER_READY_MS:-3000}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/svc-newcomer-XXXXXX")
PID=
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
now_ms() { date +%s%3N; }
fail() { echo "newcomer: FAIL: $*" >&2; exit 1; }

# better-sqlite3's prebuilt binary comes from GitHub, which this machine cannot reach, so every
# install of it compiles SQLite (~1.5 min of CPU; twice here). A newcomer online downloads that
# prebuilt; the checkout's own binary, built by its `npm ci` from the same version for the same
# Node, stands in for the download through prebuild-install's local-prebuilds option. The
# install script still runs in each install below (npm warns of an "Unknown env config").
BSQ=$ROOT/node_modules/better-sqlite3
if [ -f "$BSQ/build/Release/better_sqlite3.node" ]; then
  BSQ_V=$(node -p "require('$BSQ/package.json').version")
  mkdir -p "$WORK/prebuilds"
  tar czf "$WORK/prebuilds/better-sqlite3-v$BSQ_V-node-v$(node -p process.versions.modules)-linux-$(node -p process.arch).tar.gz" \
    -C "$BSQ" build/Release/better_sqlite3.node
  export npm_config_better_sqlite3_local_prebuilds=$WORK/prebuilds
fi

echo "newcomer: cloning $ROOT into $WORK/svc-gateway"
git clone -q "$ROOT" "$WORK/svc-gateway"
cd "$WORK/svc-gateway"
t0=$(now_ms)
# --prefer-offline: in CI the suite's own `npm ci` has just filled the npm cache, so use what
# is there instead of asking the registry again; the lockfile pins what is installed either way.
npm ci --prefer-offline --no-audit --no-fund
echo "newcomer: npm ci took $(( $(now_ms) - t0 )) ms"

RUN=$(awk '/^## Run it/{s=1} s&&/^```sh$/{b=1;next} b&&/^```$/{exit} b' README.md | grep -v '^npm ci$')
[ -n "$RUN" ] && [ "$(printf '%s\n' "$RUN" | wc -l)" -eq 1 ] || fail "README's Run it block should be npm ci and one run command, got: $RUN"
# serve LABEL COMMAND: run COMMAND (a free SVC_PORT, a data dir of its own) until it listens,
# within LIMIT_MS, check /healthz, then SIGTERM it and check that the port is released.
serve() {
  local label=$1 cmd=$2 port t0 ready
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  echo "newcomer: running \"$cmd\" ($label) with SVC_PORT=$port"
  t0=$(now_ms)
  # setsid: its own process group, as a terminal would give it, so the TERM below reaches npm only.
  SVC_PORT=$port SVC_DATA_DIR="$WORK/data-$label" setsid bash -c "exec $cmd" >"$WORK/run-$label.log" 2>&1 &
  PID=$!
  until grep -q 'listening on' "$WORK/run-$label.log"; do
    kill -0 "$PID" 2>/dev/null || { cat "$WORK/run-$label.log"; fail "\"$cmd\" exited before listening"; }
    [ $(( $(now_ms) - t0 )) -lt 30000 ] || { cat "$WORK/run-$label.log"; fail "not listening after 30 s"; }
    sleep 0.05
  done
  ready=$(( $(now_ms) - t0 ))
  echo "newcomer: listening after $ready ms (limit $LIMIT_MS)"
  [ "$ready" -le "$LIMIT_MS" ] || fail "\"$cmd\" took $ready ms to listen (more than $LIMIT_MS)"
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || fail "GET /healthz failed"
  kill -TERM "$PID"
  for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$PID" 2>/dev/null && fail "still running 10 s after SIGTERM"
  PID=
  sleep 0.5
  curl -s "http://127.0.0.1:$port/healthz" >/dev/null && fail "port $port still served after SIGTERM to \"$cmd\""
  echo "newcomer: SIGTERM stopped it and released the port"
}
serve readme "$RUN"

t0=$(now_ms)
npx --no-install svc-gateway --help >/dev/null 2>"$WORK/npx.err" || { cat "$WORK/npx.err"; fail "npx svc-gateway --help failed"; }
echo "newcomer: npx svc-gateway --help in the clone took $(( $(now_ms) - t0 )) ms"
grep -q 'compiling' "$WORK/npx.err" && fail "npx compiled the TypeScript again"

npx tap test/readme-quickstart.test.ts

if [ "${1:-}" = "--pack" ]; then
  TGZ=$(npm pack --silent --pack-destination "$WORK" | tail -1)
  # Node's types too, the clone's version, for scripts/kit-fixtures.sh below (a TypeScript
  # project's own): in this install they cost next to nothing, in a second one most of a minute.
  NODE_TYPES=@types/node@$(node -p "require('./node_modules/@types/node/package.json').version")
  mkdir "$WORK/project" && cd "$WORK/project" && npm init -y >/dev/null
  t0=$(now_ms)
  # --prefer-offline: the versions npm ci just cached are used as they are; the install scripts
  # run all the same (where an optional dependency's download failed an install before).
  npm install --prefer-offline --no-audit --no-fund "$WORK/$TGZ" "$NODE_TYPES"
  echo "newcomer: installing the packed package took $(( $(now_ms) - t0 )) ms"
  t0=$(now_ms)
  npx --no-install svc-gateway --help >/dev/null
  took=$(( $(now_ms) - t0 ))
  echo "newcomer: npx svc-gateway --help from the installed package took $took ms"
  [ "$took" -le "$LIMIT_MS" ] || fail "npx svc-gateway --help took $took ms"
  serve package "npx --no-install svc-gateway"
  # TypeScript plugins type-checked against this installation's exports, then run by it.
  "$WORK/svc-gateway/scripts/kit-fixtures.sh" "$WORK/project"
fi
echo "newcomer: ok"
