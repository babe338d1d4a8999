#!/usr/bin/env bash
# The main job beside Soda: `lookout run --all` on the 12 comparison checks, timed round-robin with
# Soda Core's scan of the same checks (bench/main_job/roundrobin.py: GNU `time -v`, one warm-up, N
# rounds each running every command once in turn, paired ratios to Soda v3's scan in the same round,
# CPU time, max RSS, the load average each round). Soda runs from the peer harness's venvs
# (../shared/peers/soda, `setup.sh` first).
#
# Usage: bench/main_job.sh [N] [TREE ...]
#   N      rounds (default 15; at least 15 for figures worth writing down)
#   TREE   Lookout checkouts to time, each with its own .venv (`make dev`); default this one. Give a
#          worktree of an older commit first to time before and after side by side.
# Env: SODA_PEER  the Soda harness (default ../shared/peers/soda beside the main checkout);
#      BENCH_ONLY a grep -E pattern on the labels: only the commands it matches (Soda v3's 12-check
#                 scan, the reference, always runs).
#      BENCH_COPIES how many times over the scale rows repeat the 12 checks (default 10: 120 checks;
#                 16 gives 192)
#
# For each TREE it times, with the tree's short commit in the label:
#   run 12        lookout run --all on bench/main_job/automations (3 automations, 12 checks)
#   run 120 same  the 12 checks 10 times over, copies with the same SQL (scale.py same)
#   run 120 dist  the same, every copy a query of its own (scale.py distinct)
#   --help, validate 12
#   imports only  the modules a run loads, imported and nothing else (bench/main_job/floor.py):
#                 the libraries the design names (SQLAlchemy, sqlglot, pydantic, PyYAML), every
#                 library, then with Lookout's own modules
# once: the interpreter's start alone, and a query process's floor (DuckDB imported, the flights
# file opened read-only, SELECT 1);
# and Soda v3's scan of its 12 checks (the reference), Soda v4's 3 contracts in one process, the 12
# checks as plain SQL (the floor), and Soda v3's scan of the 12 checks 10 times over. Soda's commands
# are the scan itself (the harness's run.sh also prints a summary, another interpreter start).
# Every Lookout run stores its reports in a SQLite file of its own under the state folder and reads the
# flights source's DuckDB cache built there by the warm-up. LLM and decision settings are unset, as in
# Soda's run: the checks decide. Each tree's own modules are byte-compiled first (a pip install does
# that; an editable one under PYTHONDONTWRITEBYTECODE would compile them on every start).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
n=${1:-15}
shift || true
trees=("$@")
[[ ${#trees[@]} -gt 0 ]] || trees=("$repo")
common=$(cd "$(git -C "$repo" rev-parse --git-common-dir)/.." && pwd)
peer=${SODA_PEER:-$common/../shared/peers/soda}
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/lookout-peers
cache=$cache_root
[[ -x $peer/setup.sh ]] || { echo "no Soda harness at $peer (set SODA_PEER)" >&2; exit 2; }
[[ -x $cache_root/soda/v3-venv/bin/soda ]] || { echo "run $peer/setup.sh first" >&2; exit 2; }
state=$cache/lookout
rm -rf "$state"
mkdir -p "$state"
python=$(type -P python3)
copies=${BENCH_COPIES:-10}
many=$((12 * copies))
"$python" "$here/main_job/scale.py" lookout "$state/same-many" "$copies" same
"$python" "$here/main_job/scale.py" lookout "$state/distinct-many" "$copies" distinct
mkdir -p "$state/soda-many"
cp "$peer/v3/configuration.yml" "$state/soda-many/"
"$python" "$here/main_job/scale.py" soda "$state/soda-many/checks.yml" "$copies" "$peer/v3/checks.yml"

# shellcheck disable=SC1091
source "$cache/soda/v3.env"
db3=$LOOKOUT_PEERS_DB
# shellcheck disable=SC1091
source "$cache/soda/v4.env"
db4=$LOOKOUT_PEERS_DB
soda3="cd '$peer/v3' && LOOKOUT_PEERS_DB='$db3' HOME='$cache/soda/home-v3'"
soda3+=" '$cache/soda/v3-venv/bin/soda' scan -d flights -c configuration.yml checks.yml"
soda3+=" >'$state/soda-12.log' 2>&1; [ \$? -le 2 ]"  # 2 = checks failed, as they should
soda4="cd '$peer/v4' && LOOKOUT_PEERS_DB='$db4' SODA_CORE_TELEMETRY_ENABLED=false"
soda4+=" '$cache/soda/v4-venv/bin/python' verify.py '$state/v4.json' 2>'$state/soda-v4.log'; [ \$? -le 1 ]"
soda120="cd '$state/soda-many' && LOOKOUT_PEERS_DB='$db3' HOME='$cache/soda/home-v3'"
soda120+=" '$cache/soda/v3-venv/bin/soda' scan -d flights -c configuration.yml checks.yml"
soda120+=" >'$state/soda-many.log' 2>&1; [ \$? -le 2 ]"
reference="soda v3 scan, 12 checks"
extra=(
  "$reference|$soda3"
  "soda v4, 3 contracts in one process|$soda4"
  "12 checks as plain SQL (DuckDB of Soda v4)|LOOKOUT_PEERS_DB='$db4' '$cache/soda/v4-venv/bin/python' '$peer/baseline_sql.py' >/dev/null"
  "soda v3 scan, $many checks (12 x $copies)|$soda120"
)

unset LOOKOUT_LLM_BASE_URL LOOKOUT_LLM_MODEL LOOKOUT_LLM_API_KEY LOOKOUT_DECISION_BACKEND
for tree in "${trees[@]}"; do
  tree=$(cd "$tree" && pwd)
  [[ -x $tree/.venv/bin/lookout ]] || { echo "$tree has no .venv/bin/lookout (make dev)" >&2; exit 2; }
  "$tree/.venv/bin/python" -m compileall -q "$tree/checks" "$tree/worker" >/dev/null
  rev=$(git -C "$tree" rev-parse --short HEAD)
  env="cd '$state' && PYTHONPATH='$tree' LOOKOUT_CACHE_DIR='$state/cache' LOOKOUT_STORE_URL='sqlite:///$state/$rev.db'"
  lk="$env '$tree/.venv/bin/lookout' --config '$tree/config/lookout.yaml'"
  run() { echo "$lk --automations '$1' run --all >/dev/null; [ \$? -le 1 ]"; }
  extra+=(
    "lookout $rev run --all, 12 checks|$(run "$here/main_job/automations")"
    "lookout $rev run --all, $many checks same SQL|$(run "$state/same-many")"
    "lookout $rev run --all, $many checks distinct SQL|$(run "$state/distinct-many")"
    "lookout $rev --help|$lk --help >/dev/null"
    "lookout $rev validate, 12 checks|$lk --automations '$here/main_job/automations' validate >/dev/null"
  )
  # The imports of a run alone: recorded from a run whose DuckDB cache is built (a first run builds it).
  modules="$state/$rev-modules.txt"
  bash -c "$(run "$here/main_job/automations")" >/dev/null 2>&1
  (cd "$state" && LOOKOUT_CACHE_DIR="$state/cache" LOOKOUT_STORE_URL="sqlite:///$state/$rev-record.db" \
    "$tree/.venv/bin/python" "$here/main_job/floor.py" record "$modules" -- \
    --config "$tree/config/lookout.yaml" --automations "$here/main_job/automations" run --all \
    >/dev/null 2>&1) || true
  floor="cd '$state' && '$tree/.venv/bin/python' '$here/main_job/floor.py' import '$modules'"
  extra+=(
    "lookout $rev imports only, SQLAlchemy sqlglot pydantic PyYAML|$floor named"
    "lookout $rev imports only, libraries|$floor libraries"
    "lookout $rev imports only, libraries and lookout's modules|$floor all"
  )
  first_python=${first_python:-$tree/.venv/bin/python}
done
cache_db=$(ls "$state"/cache/sources/flights-*.duckdb | head -1)
extra+=(
  "python start, no imports|'$first_python' -c pass"
  "query process floor: python, import duckdb, connect, SELECT 1|'$first_python' -c \"import duckdb; duckdb.connect('$cache_db', read_only=True).execute('SELECT 1').fetchall()\""
)
if [[ -n ${BENCH_ONLY:-} ]]; then
  kept=()
  for entry in "${extra[@]}"; do
    label=${entry%%|*}
    if [[ $label == "$reference" ]] || grep -qE "$BENCH_ONLY" <<<"$label"; then kept+=("$entry"); fi
  done
  extra=("${kept[@]}")
fi
"$python" "$here/main_job/roundrobin.py" "$n" "$reference" "${extra[@]}"
