#!/usr/bin/env bash
# Builds the two base images that tests/deploy/test_container_image.py substitutes for
# deploy/Dockerfile's public bases (no registry image can be pulled on the test machines):
# Debian bookworm from Debian's packages (debootstrap), imported into podman as
#   localhost/timebot-test-python:bookworm   python3, python3-venv, python-is-python3
#   localhost/timebot-test-node:bookworm     the same plus Debian's nodejs and npm
# The host's CA bundle is copied in (an egress proxy may re-sign TLS), and npm/pip are told
# to use it. Needs root, debootstrap and podman; takes a few minutes; a second run is a no-op.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)  # before the cd below: $0 may be relative
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
WORK=${TIMEBOT_BASES_DIR:-/var/tmp/timebot-test-bases}
CA=/etc/ssl/certs/ca-certificates.crt
have() { podman image exists "$1"; }
# deploy/Dockerfile's stages that change only with the locks (its npm packages, requirements.lock),
# built on the bases with the image test's options (tests/deploy/test_container_image.py): the
# test's own build then takes them from podman's cache and builds only what the sources change.
prebuild() {
  cd "$ROOT"
  for target in ide deps; do
    podman --runtime runc build --format docker --network host \
      --ulimit nofile=1024:1024 --ulimit nproc=1000:1000 \
      --build-arg PYTHON_IMAGE=localhost/timebot-test-python:bookworm \
      --build-arg NODE_IMAGE=localhost/timebot-test-node:bookworm \
      --target "$target" -f deploy/Dockerfile -q . >/dev/null
  done
  echo "image stages ide and deps built"
}
if have localhost/timebot-test-python:bookworm && have localhost/timebot-test-node:bookworm; then
  echo "bases present"; prebuild; exit 0
fi
mkdir -p "$WORK"; cd "$WORK"
if [ ! -x rootfs/usr/bin/python3 ]; then
  rm -rf rootfs
  debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
    bookworm rootfs "$MIRROR"
fi
cp "$CA" rootfs/etc/ssl/certs/ca-certificates.crt
chroot rootfs apt-get clean
changes=(--change "ENV SSL_CERT_FILE=$CA" --change "ENV PIP_CERT=$CA"
         --change "ENV NODE_EXTRA_CA_CERTS=$CA" --change "CMD [\"/bin/bash\"]")
tar -C rootfs -cf python-base.tar .
podman import "${changes[@]}" python-base.tar localhost/timebot-test-python:bookworm
rm -rf rootfs-node; cp -a rootfs rootfs-node
cp /etc/resolv.conf rootfs-node/etc/resolv.conf
chroot rootfs-node sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -q &&
  apt-get install -y -q --no-install-recommends nodejs npm && apt-get clean'
cp "$CA" rootfs-node/etc/ssl/certs/ca-certificates.crt
tar -C rootfs-node -cf node-base.tar .
podman import "${changes[@]}" node-base.tar localhost/timebot-test-node:bookworm
rm -f python-base.tar node-base.tar
echo "bases built"
prebuild
