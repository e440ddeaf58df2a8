#!/usr/bin/env bash
# Regenerate every committed certificate. Needs a NEW project key: the private half of the key
# that signed the committed files is not kept anywhere, by design.
#   certdp keygen --out project.key && cp project.key.pub certificates/certdp-project.pub
#   bash certificates/make_certificates.sh project.key
set -euo pipefail
key=${1:?usage: make_certificates.sh PRIVATE_KEY}
cd "$(dirname "$0")"
# DP-SGD, PLD (the default accountant): claim by the lattice upper bound, refutation one step
# (1e-5) below by the lattice lower bound, a proved violation
for q in 0.005 0.01 0.05; do
  certdp calibrate subsampled-gaussian --q "$q" --steps 500 --epsilon 3 --delta 1e-5 \
    --out "dpsgd_pld_q${q}_n500_eps3.json" --sign "$key" --json
done
certdp calibrate subsampled-gaussian --q 0.01 --steps 2000 --epsilon 3 --delta 1e-5 \
  --out "dpsgd_pld_q0.01_n2000_eps3.json" --sign "$key" --json
# DP-SGD, RDP (the second family): step 1e-6, 75 integer orders
for q in 0.005 0.01 0.05; do
  certdp calibrate subsampled-gaussian --via rdp --q "$q" --steps 500 --epsilon 3 --delta 1e-5 \
    --out "dpsgd_q${q}_n500_eps3.json" --sign "$key" --json
done
certdp calibrate subsampled-gaussian --via rdp --q 0.01 --steps 2000 --epsilon 3 --delta 1e-5 \
  --out "dpsgd_q0.01_n2000_eps3.json" --sign "$key" --json
for m in 100 250 500; do
  for e in 10 20 40; do
    certdp calibrate random-allocation --steps "$m" --epochs "$e" --tv 0.1 \
      --out "random_allocation_M${m}_E${e}_tv0.1.json" --sign "$key" --json
  done
done
