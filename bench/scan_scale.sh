#!/usr/bin/env bash
# The 12 comparison checks on grown data, round-robin beside Soda Core v3 and the plain-SQL floors.
#
# Usage: bench/scan_scale.sh [N] [duckdb|postgres] [ROWS]
#   N      rounds after one warm-up (default 15)
#   ENGINE duckdb (default) or postgres (LOOKOUT_TEST_PG_URL's server; database
#          lookout_bench_flights_<ROWS>, built once and kept: drop it by hand)
#   ROWS   flights rows (default 10000000); the other tables as shipped (bench/scan_scale/build.py)
#
# Rows timed (bench/main_job/roundrobin.py: GNU time -v, paired ratios to Soda v3's scan):
#   soda v3 scan           the harness's 12 SodaCL checks (../shared/peers/soda/v3/checks.yml)
#   lookout run --all      bench/main_job/automations (the same 12 checks) on the grown source
#   plain SQL per check    the 12 statements, one by one (bench/scan_scale/floor_sql.py)
#   plain SQL per table    the same values, one scan per table where the checks are aggregates
# Env: SCAN_SCALE_PER_CHECK=0 leaves out the per-check floor (no target reads it; saves a third
#      of a round on PostgreSQL).
# Needs the Soda harness (../shared/peers/soda/setup.sh; for postgres also
# `…/soda/v3-venv/bin/pip install soda-core-postgres==3.5.6`).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
n=${1:-15}
engine=${2:-duckdb}
rows=${3:-10000000}
common=$(cd "$(git -C "$repo" rev-parse --git-common-dir)/.." && pwd)
peer=${SODA_PEER:-$common/../shared/peers/soda}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lookout-peers
v3=$cache/soda/v3-venv/bin
[[ -x $v3/soda ]] || { echo "run $peer/setup.sh first" >&2; exit 2; }
state=$cache/scan-scale/$engine-$rows
mkdir -p "$state/automations"
py=$repo/.venv/bin/python

pg_admin=${LOOKOUT_TEST_PG_URL:-postgresql://postgres@127.0.0.1:5432/test}
pg_db=lookout_bench_flights_$rows
pg_url=${pg_admin%/*}/$pg_db
if [[ $engine == duckdb ]]; then
  "$py" "$here/scan_scale/build.py" duckdb "$cache/data/flights-$rows.duckdb" "$rows" >/dev/null
  "$v3/python" "$here/scan_scale/build.py" duckdb "$cache/data/flights-$rows-duckdb1.0.duckdb" "$rows" >/dev/null
  source_block="    type: duckdb
    database: $cache/data/flights-$rows.duckdb"
  soda_block="  type: duckdb
  path: $cache/data/flights-$rows-duckdb1.0.duckdb
  read_only: true"
  floor_where=$cache/data/flights-$rows.duckdb
else
  psql "$pg_admin" -qtAc "SELECT 1 FROM pg_database WHERE datname = '$pg_db'" | grep -q 1 \
    || psql "$pg_admin" -qc "CREATE DATABASE $pg_db"
  "$py" "$here/scan_scale/build.py" postgres "$pg_url" "$rows" >/dev/null
  host=$(sed -E 's#^[a-z]+://([^@]*@)?([^:/]+).*#\2#' <<<"$pg_admin")
  port=$(sed -nE 's#^[a-z]+://[^/]*:([0-9]+)/.*#\1#p' <<<"$pg_admin")
  user=$(sed -nE 's#^[a-z]+://([^:@/]+)@.*#\1#p' <<<"$pg_admin")
  source_block="    type: sqlalchemy
    url: ${pg_url/postgresql:/postgresql+psycopg:}"
  soda_block="  type: postgres
  host: $host
  port: ${port:-5432}
  username: ${user:-postgres}
  password: \"\"
  database: $pg_db
  schema: public"
  floor_where=$pg_url
fi
cat >"$state/lookout.yaml" <<YAML
sources:
  flights:
$source_block
YAML
for f in "$here"/main_job/automations/*.yaml; do cp "$f" "$state/automations/"; done
mkdir -p "$state/soda"
printf 'data_source flights:\n%s\n' "$soda_block" >"$state/soda/configuration.yml"
cp "$peer/v3/checks.yml" "$state/soda/checks.yml"

unset LOOKOUT_LLM_BASE_URL LOOKOUT_LLM_MODEL LOOKOUT_LLM_API_KEY LOOKOUT_DECISION_BACKEND
"$py" -m compileall -q "$repo/checks" "$repo/worker" >/dev/null
rev=$(git -C "$repo" rev-parse --short HEAD)
soda="cd '$state/soda' && HOME='$cache/soda/home-v3' '$v3/soda' scan -d flights"
soda+=" -c configuration.yml checks.yml >'$state/soda.log' 2>&1; [ \$? -le 2 ]"
lookout="cd '$state' && PYTHONPATH='$repo' LOOKOUT_STORE_URL='sqlite:///$state/$rev.db' LOOKOUT_CACHE_DIR='$state/cache'"
lookout+=" '$repo/.venv/bin/lookout' --config '$state/lookout.yaml' --automations '$state/automations'"
lookout+=" run --all >'$state/lookout.log' 2>&1; [ \$? -le 1 ]"
reference="soda v3 scan, 12 checks, $engine $rows rows"
per_check=("plain SQL, one query per check|'$py' '$here/scan_scale/floor_sql.py' $engine '$floor_where' per-check >/dev/null")
[[ ${SCAN_SCALE_PER_CHECK:-1} == 0 ]] && per_check=()
[[ $engine == postgres ]] && export ROUNDROBIN_PG_CPU=1  # the server's CPU per command
"$py" "$here/main_job/roundrobin.py" "$n" "$reference" \
  "$reference|$soda" \
  "lookout $rev run --all, 12 checks|$lookout" \
  "${per_check[@]}" \
  "plain SQL, one scan per table|'$py' '$here/scan_scale/floor_sql.py' $engine '$floor_where' per-table >/dev/null"
