#!/usr/bin/env bash
# The read shapes of issue 27's table against a running, seeded server
# (tools/load seed), one after another, each -d long at -c 32, then the
# machine's own limits (tools/load baseline) in the same run.
#
#   tools/load/table.sh URL TOKEN MR_PROJECT_ID [DURATION]
#
# With DEEP=1 it also reads the deep pages of a server seeded with
# 20,000 projects (tools/load seed -projects 20000).
# URL is the server's root (http://127.0.0.1:8080), TOKEN an
# administrator's token, MR_PROJECT_ID the project seed printed. With
# LOAD=wrk the requests are sent by wrk (Debian's package; 2 threads),
# which costs the shared cores less than the Go load tool: the issue's
# figures were taken that way.
set -euo pipefail
url=${1:?URL}; token=${2:?TOKEN}; mrp=${3:?MR_PROJECT_ID}; d=${4:-10s}
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/load
go build -o "$bin" ./tools/load
api=$url/api/v4
# measure URL [HEADER]: one line "req/s | p50 |".
measure() {
  if [ "${LOAD:-}" = wrk ]; then
    wrk -t 2 -c 32 -d "$d" --latency ${2:+-H "$2"} "$1" |
      awk '$1 == "50%" {p50 = $2} /^Requests\/sec/ {rps = int($2)} END {printf "%s | %s |\n", rps, p50}'
  else
    "$bin" -c 32 -d "$d" ${2:+-token "${2#PRIVATE-TOKEN: }"} "$1" |
      awk '/req\/s/ {sub(/,$/, "", $8); printf "%s | %s |\n", $5, $8}'
  fi
}
shape() {
  printf '| `%s` | ' "$1"
  measure "$api$1" "PRIVATE-TOKEN: $token"
}
echo "| shape (c=32, $d, ${LOAD:-tools/load}) | req/s | p50 |"
echo "|---|---|---|"
shape "/projects?per_page=20"
shape "/projects?per_page=20&page=40"
shape "/users?per_page=20"
shape "/users?per_page=20&page=40"
shape "/projects/$((mrp / 2))"
shape "/projects/$mrp/merge_requests?per_page=20"
shape "/projects/$mrp/merge_requests/1"
shape "/projects/$mrp/repository/branches?per_page=20"
# The deep pages of the issue's 20,000-project rows: offset page 900,
# keyset page 1 and the keyset page that starts where offset page 900
# does (its id_before taken from the row before it).
if [ "${DEEP:-}" = 1 ]; then
  shape "/projects?per_page=20&page=900"
  shape "/projects?pagination=keyset&per_page=20&order_by=id&sort=desc"
  before=$(curl -fs -H "PRIVATE-TOKEN: $token" "$api/projects?per_page=1&page=17980&order_by=id&sort=desc" |
    sed -n 's/^\[{"id":\([0-9]*\).*/\1/p')
  shape "/projects?pagination=keyset&per_page=20&order_by=id&sort=desc&id_before=$before"
fi
"$bin" baseline -listen 127.0.0.1:18090 >/dev/null &
base=$!
trap 'kill $base 2>/dev/null' EXIT
for _ in $(seq 50); do curl -fs http://127.0.0.1:18090/bare >/dev/null && break; sleep 0.1; done
for p in bare rows; do
  printf '| baseline `/%s` | ' "$p"
  measure "http://127.0.0.1:18090/$p"
done
