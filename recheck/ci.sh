#!/usr/bin/env bash
# CI step (issue 38): run the recheck kernel on every committed certificate in a fresh virtual
# environment that holds python-flint and cryptography only (certdp is not installed), so that the
# kernel's independence is tested, not assumed. Usage: bash recheck/ci.sh [VENV_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$(mktemp -d)/recheck-venv}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "python-flint==0.9.0" cryptography
cd "$(mktemp -d)"  # -I and a foreign working directory: nothing of the checkout is importable
if "$venv/bin/python" -I -c "import certdp" 2>/dev/null; then
  echo "recheck/ci.sh: certdp is importable in $venv: the kernel would not be tested alone" >&2
  exit 1
fi
# shellcheck source=expect.sh
. "$root/recheck/expect.sh"
fail=0
for f in "$root"/certificates/*.json; do
  # every committed file is proved, except the kinds the kernel reports as not rechecked (expect.sh)
  IFS=$'\t' read -r want expect < <(expect_for "$(basename "$f")")
  rc=0
  "$venv/bin/python" -I "$root/recheck/recheck.py" "$f" --pubkey "$root/certificates/certdp-project.pub" \
    >out.txt 2>&1 || rc=$?
  shown=$(grep -F "$expect" out.txt | head -n 1) || shown=$(tail -n 1 out.txt)  # the line that decides
  echo "$(basename "$f"): exit $rc (want $want): $shown"
  # the signature is checked on every file, rechecked or not
  if [ "$rc" != "$want" ] || ! grep -qF "$expect" out.txt || ! grep -qxF "trusted signer" out.txt; then
    fail=1
    cat out.txt
  fi
done
exit $fail
