#!/usr/bin/env bash
# Third-party packages written in TypeScript, type-checked against the packed gateway's exports
# alone and run by it (issue 28). scripts/newcomer.sh --pack calls it with the project where it
# installed the packed tarball (so no second pack or install); alone: scripts/kit-fixtures.sh DIR,
# DIR a project with the packed svc-gateway in its node_modules.
#  1. @types/node installed in DIR (a TypeScript project's own); test/fixtures/ts-kit/* copied
#     into DIR/kit/, each compiled there with this checkout's tsc (typescript, a dev dependency)
#     under strict, skipLibCheck false (ts-kit/tsconfig.base.json): 'svc-gateway/area' and
#     'svc-gateway/vendor' resolve to the installed package's exports, with no path into the
#     sources. Each compiled package goes into DIR/node_modules as npm would leave it, the area
#     first: the vendor imports its capability map. The vendor's program holds no Fastify or pino;
#  2. svc-vendor-tally-misspelt must not compile: tsc fails with the one error naming "text.cuont",
#     misspelt beside the correct "text.count".
#     Its emitted JavaScript (tsc emits despite errors) is installed all the same;
#  3. test/core/kit/typed-packages.pack.ts: the installed gateway, a YAML config naming the packages,
#     a real request to the area's route charged the vendor's price; the misspelt JavaScript
#     stops the boot with the nearest name.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "kit-fixtures: FAIL: $*" >&2; exit 1; }
PROJECT=$(cd "${1:?usage: scripts/kit-fixtures.sh DIR (a project with the packed svc-gateway installed)}" && pwd)
[ -f "$PROJECT/node_modules/svc-gateway/package.json" ] || fail "$PROJECT/node_modules has no svc-gateway"
TSC=("$(command -v node)" "$ROOT/node_modules/typescript/bin/tsc")
now_ms() { date +%s%3N; }
t0=$(now_ms)

# A TypeScript project has Node's types of its own: the kits' declarations name Buffer, fetch,
# workers (the gateway's @types/node is a dev dependency, not installed with it). The checkout's
# version, from the npm cache CI's `npm ci` filled; newcomer.sh installs it with the tarball.
version() { node -p "require('$1/node_modules/@types/node/package.json').version" 2>/dev/null || true; }
NODE_TYPES=$(version "$ROOT")
if [ "$(version "$PROJECT")" != "$NODE_TYPES" ]; then
  (cd "$PROJECT" && npm install --prefer-offline --no-audit --no-fund --save-dev "@types/node@$NODE_TYPES")
  echo "kit-fixtures: @types/node@$NODE_TYPES installed in $(( $(now_ms) - t0 )) ms"
fi

rm -rf "$PROJECT/kit"
cp -R "$ROOT/test/fixtures/ts-kit" "$PROJECT/kit"
# compile NAME [FLAG...]: tsc -p kit/NAME (exit status and output to the caller).
compile() { "${TSC[@]}" -p "$PROJECT/kit/$1" --pretty false "${@:2}"; }
# install NAME: its package.json and dist/ into node_modules/NAME, as npm installs a package's `files`.
install() {
  rm -rf "$PROJECT/node_modules/$1" && mkdir "$PROJECT/node_modules/$1"
  cp -R "$PROJECT/kit/$1/package.json" "$PROJECT/kit/$1/dist" "$PROJECT/node_modules/$1/"
}

for name in svc-area-wordcount svc-vendor-tally; do
  files=$(compile "$name" --listFiles) || { echo "$files"; fail "$name does not compile against the packed kits (above)"; }
  install "$name"
  echo "kit-fixtures: $name compiles against the packed kits ($(grep -c . <<<"$files") files) and is installed"
done
# The vendor kit's promise: a vendor's program holds no Fastify and no pino types.
if grep -E '/node_modules/(fastify|pino|@fastify)/' <<<"$files"; then fail "svc-vendor-tally's program holds the files above"; fi

rc=0
out=$(compile svc-vendor-tally-misspelt) || rc=$?
echo "$out"
[ "$rc" -ne 0 ] || fail "svc-vendor-tally-misspelt compiled: a misspelt capability name must not"
[ "$(grep -c 'error TS' <<<"$out")" -eq 1 ] || fail "svc-vendor-tally-misspelt: expected one error, got the above"
# Beside the correct "text.count": defineVendor's exact map names it (TypeScript's own excess
# property check, TS2353, would name only a lone misspelt name).
grep -q "error TS2322: " <<<"$out" && grep -q "'text\.cuont' is not a capability of the map this vendor serves" <<<"$out" ||
  fail "svc-vendor-tally-misspelt: the error does not name 'text.cuont'"
install svc-vendor-tally-misspelt
echo "kit-fixtures: svc-vendor-tally-misspelt does not compile (tsc exit $rc, TS2322 on 'text.cuont')"
echo "kit-fixtures: type checks took $(( $(now_ms) - t0 )) ms"

cd "$ROOT"
SVC_KIT_PROJECT=$PROJECT npx --no-install tap test/core/kit/typed-packages.pack.ts
echo "kit-fixtures: ok, $(( $(now_ms) - t0 )) ms"
