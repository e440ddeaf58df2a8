#!/usr/bin/env bash
# Time and peak memory of the recheck kernel beside `certdp verify`, on every committed certificate
# (the table in recheck/README.md). The kernel runs in a virtual environment with python-flint and
# cryptography only (certdp not importable), `certdp verify` in the current one. One run each, one
# after the other, measured by /usr/bin/time -v (GNU time). Usage: bash recheck/measure.sh [VENV_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$(mktemp -d)/recheck-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "python-flint==0.9.0" cryptography
fi
work=$(mktemp -d)
cd "$work"  # -I and a foreign working directory: nothing of the checkout is importable
if "$venv/bin/python" -I -c "import certdp" 2>/dev/null; then
  echo "recheck/measure.sh: certdp is importable in $venv" >&2
  exit 1
fi
pub="$root/certificates/certdp-project.pub"

# one measured run: prints "exit wall_s cpu_s peak_MiB"
measured() {
  local rc=0
  /usr/bin/time -v "$@" >run.out 2>run.err || rc=$?
  awk -v rc="$rc" '
    /Elapsed \(wall clock\)/ { n = split($NF, t, ":"); wall = (n == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2] }
    /User time/ { cpu += $NF } /System time/ { cpu += $NF }
    /Maximum resident set size/ { mib = $NF / 1024 }
    END { printf "%s %.1f %.1f %.0f\n", rc, wall, cpu, mib }' run.err
}

echo "| file | kernel exit | kernel s (CPU s) | kernel MiB | \`certdp verify\` exit | \`certdp verify\` s (CPU s) | \`certdp verify\` MiB |"
echo "|---|---|---|---|---|---|---|"
for f in "$root"/certificates/*.json; do
  read -r krc kwall kcpu kmib < <(measured "$venv/bin/python" -I "$root/recheck/recheck.py" "$f" --pubkey "$pub")
  read -r vrc vwall vcpu vmib < <(measured python -m certdp verify "$f" --pubkey "$pub")
  echo "| \`$(basename "$f")\` | $krc | $kwall ($kcpu) | $kmib | $vrc | $vwall ($vcpu) | $vmib |"
done
