# What recheck/ci.sh wants of the kernel for one committed certificate (sourced by ci.sh and by
# tests/test_recheck.py). Usage: expect_for FILE_NAME; prints "WANT_EXIT<TAB>TEXT THE OUTPUT MUST HOLD".
# Random-allocation (epsilon, delta) certificates (random_allocation_*_eps*.json: hockey-upper and
# hockey-lower checks) are outside the kernel: it checks their digest and signature, then reports
# exactly that it did not recheck their bounds (exit 2); certdp verify recomputes them. A k > 1 file
# (random_allocation_*_k*_eps*.json) records a claim only.
expect_for() {
  case "$1" in
    random_allocation_*_k*_eps*.json)  # k > 1: a hockey-upper claim recording k, no refutation
      printf '2\t%s\n' "not rechecked by this kernel (claim kind 'hockey-upper')" ;;
    random_allocation_*_eps*.json)
      printf '2\t%s\n' "not rechecked by this kernel (claim kind 'hockey-upper'; refutation kind 'hockey-lower')" ;;
    *)
      printf '0\t%s\n' "every claim and refutation proved" ;;
  esac
}
