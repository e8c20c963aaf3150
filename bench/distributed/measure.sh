# Shared by the scaling scripts of this folder (sourced): a program's timed
# runs and the device it ran on, from its JSON report.
#
#   runs=3 csv=OUT.csv; measure "program,ranks,size..." COMMAND...
# appends "program,ranks,size...,run,ms,checksum" for each of $runs runs
# after one warm-up run; ms is the report's total_ms (the step loop, set-up
# excluded; a distributed program's is its slowest rank's). A failed run
# stops the calling script (set -e, pipefail).

# One run: "ms checksum".
run_report() {
  "$@" --json --quiet | python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["total_ms"], r["checksum"])'
}

# CSV prefix, then the command.
measure() {
  local prefix=$1; shift
  run_report "$@" >/dev/null  # warm-up
  local run ms checksum
  for run in $(seq 1 "$runs"); do
    read -r ms checksum <<<"$(run_report "$@")"
    echo "$prefix,$run,$ms,$checksum" >>"$csv"
  done
}

# The device named by a short run of the command.
device_of() {
  "$@" --json --quiet | python3 -c 'import json, sys; print(json.load(sys.stdin)["device"])'
}
