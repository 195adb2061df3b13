#!/usr/bin/env bash
# check.sh: unpack the image built by build.sh and run `causalctl version`
# from its root filesystem, as the image's own user and entrypoint, and
# check what the image says of itself (non-root user, the binary as
# entrypoint, the version label).
#
#   contrib/image/check.sh IMAGE.tar VERSION
#
# Needs umoci, python3 and chroot (root, as in CI).
set -euo pipefail
image=$1 version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/layout"
tar -C "$work/layout" -xf "$image"
tag=${version//+/-}
umoci unpack --image "$work/layout:$tag" "$work/bundle" >/dev/null
# The runtime bundle's config.json is what a container runtime would run.
read -r uid gid args < <(python3 - "$work/bundle/config.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
p = spec["process"]
print(p["user"]["uid"], p["user"]["gid"], "\x1f".join(p["args"]))
PY
)
IFS=$'\x1f' read -r -a argv <<<"$args"
if [ "$uid" = 0 ]; then
	echo "$image: the image runs as root" >&2
	exit 1
fi
if [ "${argv[0]}" != /usr/bin/causalctl ]; then
	echo "$image: entrypoint ${argv[0]}, want /usr/bin/causalctl" >&2
	exit 1
fi
label=$(python3 - "$work/layout" "$tag" <<'PY'
import json, sys, os
layout, tag = sys.argv[1], sys.argv[2]
def blob(d):
    algo, h = d["digest"].split(":")
    return json.load(open(os.path.join(layout, "blobs", algo, h)))
index = json.load(open(os.path.join(layout, "index.json")))
m = next(m for m in index["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag)
config = blob(blob(m)["config"])
print(config["config"].get("Labels", {}).get("org.opencontainers.image.version", ""))
PY
)
if [ "$label" != "$version" ]; then
	echo "$image: version label '$label', want '$version'" >&2
	exit 1
fi
# The entrypoint with `version` in place of the default arguments, as
# `docker run IMAGE version` would run it.
out=$(chroot --userspec="$uid:$gid" "$work/bundle/rootfs" /usr/bin/causalctl version)
echo "$out"
if ! grep -q "^causalctl version $version\$" <<<"$out"; then
	echo "$image: causalctl version printed '$out', want version $version" >&2
	exit 1
fi
# The image's user can write its temporary directory: replay spools stdin.
line='{"topic":"orders","topic_id":"01020304-0506-0708-090a-0b0c0d0e0f10","partition":0,"offset":0}'
replayed=$(chroot --userspec="$uid:$gid" "$work/bundle/rootfs" /usr/bin/causalctl replay -f - -o json <<<"$line")
if ! grep -q '"delivered":1' <<<"$replayed"; then
	echo "$image: replay from stdin in the image printed '$replayed'" >&2
	exit 1
fi
echo "$image: runs as $uid:$gid, entrypoint ${argv[*]}"
