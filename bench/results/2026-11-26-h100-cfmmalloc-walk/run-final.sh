#!/usr/bin/env bash
# Final call: the device tier at .calib/commit, then the Sec. 6 probe with its walk.
set -uo pipefail
bash .calib/d13.sh
echo "--- probe (C = this commit's walk)"
cd .calib/cf && timeout 60 ./cfprobeC 1.0 100 0.5 40 2>&1 | grep -E "^=="
