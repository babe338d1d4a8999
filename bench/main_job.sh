#!/usr/bin/env bash
# The main job beside Soda: `lookout run --all` on the 12 comparison checks, timed in the same
# round-robin session as Soda Core by the Soda peer harness (its bench.sh: GNU `time -v`, one warm-up,
# N rounds, paired ratios to Soda v3's scan, CPU time, max RSS, the load beside each figure).
#
# Usage: bench/main_job.sh [N] [TREE ...]
#   N      rounds (default 15; at least 15 for figures worth writing down)
#   TREE   Lookout checkouts to time, each with its own .venv (`make dev`); default this one. Give a
#          worktree of an older commit first to time before and after side by side.
# Env: SODA_PEER  the Soda harness (default ../shared/peers/soda beside the main checkout);
#      BENCH_SKIP  built-in Soda commands to leave out (a grep -E pattern on their labels).
#
# For each TREE it times, with the tree's short commit in the label:
#   run 12        lookout run --all on bench/main_job/automations (3 automations, 12 checks)
#   run 120 same  the 12 checks 10 times over, copies with the same SQL (scale.py same)
#   run 120 dist  the same, every copy a query of its own (scale.py distinct)
#   --help, validate 12
# and, beside Soda v3's scan of its 12 checks, the same scan of the 12 checks 10 times over.
# Every Lookout run stores its reports in a SQLite file of its own under the state folder and reads the
# flights source's DuckDB cache built there by the warm-up. LLM and decision settings are unset, as in
# Soda's run: the checks decide.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
n=${1:-15}
shift || true
trees=("$@")
[[ ${#trees[@]} -gt 0 ]] || trees=("$repo")
common=$(cd "$(git -C "$repo" rev-parse --git-common-dir)/.." && pwd)
peer=${SODA_PEER:-$common/../shared/peers/soda}
[[ -x $peer/bench.sh ]] || { echo "no Soda harness at $peer (set SODA_PEER)" >&2; exit 2; }
cache=${XDG_CACHE_HOME:-$HOME/.cache}/lookout-peers
state=$cache/lookout
rm -rf "$state"
mkdir -p "$state"
python=$(type -P python3)
"$python" "$here/main_job/scale.py" lookout "$state/same-120" 10 same
"$python" "$here/main_job/scale.py" lookout "$state/distinct-120" 10 distinct
mkdir -p "$state/soda-120"
cp "$peer/v3/configuration.yml" "$state/soda-120/"
"$python" "$here/main_job/scale.py" soda "$state/soda-120/checks.yml" 10 "$peer/v3/checks.yml"

# shellcheck disable=SC1091
source "$cache/soda/v3.env"
soda120="cd '$state/soda-120' && LOOKOUT_PEERS_DB='$LOOKOUT_PEERS_DB' HOME='$cache/soda/home-v3'"
soda120+=" '$cache/soda/v3-venv/bin/soda' scan -d flights -c configuration.yml checks.yml"
soda120+=" >'$state/soda-120.log' 2>&1; [ \$? -le 2 ]"  # 2 = checks failed, as they should
extra=("soda v3 scan, 120 checks (12 x 10)|$soda120")

unset LOOKOUT_LLM_BASE_URL LOOKOUT_LLM_MODEL LOOKOUT_LLM_API_KEY LOOKOUT_DECISION_BACKEND
for tree in "${trees[@]}"; do
  tree=$(cd "$tree" && pwd)
  [[ -x $tree/.venv/bin/lookout ]] || { echo "$tree has no .venv/bin/lookout (make dev)" >&2; exit 2; }
  rev=$(git -C "$tree" rev-parse --short HEAD)
  env="cd '$state' && LOOKOUT_CACHE_DIR='$state/cache' LOOKOUT_STORE_URL='sqlite:///$state/$rev.db'"
  lk="$env '$tree/.venv/bin/lookout' --config '$tree/config/lookout.yaml'"
  run() { echo "$lk --automations '$1' run --all >/dev/null; [ \$? -le 1 ]"; }
  extra+=(
    "lookout $rev run --all, 12 checks|$(run "$here/main_job/automations")"
    "lookout $rev run --all, 120 checks same SQL|$(run "$state/same-120")"
    "lookout $rev run --all, 120 checks distinct SQL|$(run "$state/distinct-120")"
    "lookout $rev --help|$lk --help >/dev/null"
    "lookout $rev validate, 12 checks|$lk --automations '$here/main_job/automations' validate >/dev/null"
  )
done
"$peer/bench.sh" "$n" "${extra[@]}"
