#!/usr/bin/env bash
# Regenerate every committed certificate: one certdp sweep of certificates.toml (20 calibrations;
# about 6 minutes with 2 workers). Needs a NEW project key: the private half of the key that
# signed the committed files is not kept anywhere, by design.
#   certdp keygen --out project.key && cp project.key.pub certificates/certdp-project.pub
#   bash certificates/make_certificates.sh project.key [--scheduler tcp://HOST:PORT]
# The sweep writes into certificates/.sweep (resumable: run the script again after an
# interruption and only the missing cells are computed), signs each certificate on this machine,
# then the certificates are copied here.
set -euo pipefail
key=${1:?usage: make_certificates.sh PRIVATE_KEY [certdp sweep flags]}
shift
cd "$(dirname "$0")"
certdp sweep certificates.toml --out .sweep --sign "$key" "$@"
for f in .sweep/*.json; do
  [ "$(basename "$f")" = manifest.json ] || cp "$f" .
done
