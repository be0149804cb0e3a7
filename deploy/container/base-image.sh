#!/bin/sh
# Makes the base image guestwifi-base:bookworm from Debian's packages alone, for
# machines that reach a Debian mirror but no image registry (the Dockerfile's
# FROM). Where a registry is reachable, debian:bookworm-slim serves as well:
#   docker build --build-arg BASE=debian:bookworm-slim ...
#
# Usage: deploy/container/base-image.sh [TARBALL]
#   TARBALL  where the root file system is kept between runs
#            (default /var/cache/guestwifi/base-bookworm.tar); made when missing.
# Environment: MIRROR (default: the first Debian URI apt uses, else
# http://deb.debian.org/debian), DOCKER (default docker; e.g. "docker -H unix:///run/x.sock").
# Needs root and debootstrap (apt-get install debootstrap).
set -eu
TARBALL=${1:-/var/cache/guestwifi/base-bookworm.tar}
DOCKER=${DOCKER:-docker}
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi

if [ ! -s "$TARBALL" ]; then
  mkdir -p "$(dirname "$TARBALL")"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >&2
  # The package cache and lists are the build's, not the image's.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" --numeric-owner -cf "$TARBALL.part" .
  mv "$TARBALL.part" "$TARBALL"
fi
$DOCKER import "$TARBALL" guestwifi-base:bookworm >&2
