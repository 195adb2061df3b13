#!/usr/bin/env bash
# build.sh: the causalctl container image, an OCI image layout in a tar
# archive, assembled with umoci from the static binary alone: no Docker
# daemon, no base image pulled. The image holds the binary, an unprivileged
# user (65532, "causalctl"), a /tmp for the spools of commands that read
# their input twice, and the build machine's CA bundle so that TLS to
# brokers verifies against the usual roots.
#
#   contrib/image/build.sh BINARY VERSION ARCH OUT.tar [COMMIT [DATE]]
#
# BINARY must be a static linux binary (CGO_ENABLED=0); ARCH is Go's
# (amd64, arm64). The release build runs it from a post-build hook
# (.goreleaser.yaml); .ci/run builds the image, unpacks it and runs
# `causalctl version` from its root filesystem as the image's user.
# Load it with `skopeo copy oci-archive:OUT.tar docker-daemon:causalctl:VERSION`
# or `podman load -i OUT.tar`.
set -euo pipefail
if [ $# -lt 4 ]; then
	echo "usage: $0 BINARY VERSION ARCH OUT.tar [COMMIT [DATE]]" >&2
	exit 2
fi
binary=$1 version=$2 arch=$3 out=$4 commit=${5:-} date=${6:-}
command -v umoci >/dev/null || { echo "$0: umoci is needed (Debian: apt-get install umoci)" >&2; exit 1; }
if file_out=$(file -b "$binary" 2>/dev/null) && [[ $file_out == *"dynamically linked"* ]]; then
	echo "$0: $binary is dynamically linked; build it with CGO_ENABLED=0" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
install -D -m 0755 "$binary" "$root/usr/bin/causalctl"
install -d -m 1777 "$root/tmp"
install -d -m 0755 "$root/etc/ssl/certs"
printf 'root:x:0:0:root:/root:/sbin/nologin\ncausalctl:x:65532:65532:causalctl:/nonexistent:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\ncausalctl:x:65532:\n' >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
	install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
else
	echo "$0: no /etc/ssl/certs/ca-certificates.crt here: the image verifies TLS only with --tls-ca" >&2
fi

# An OCI tag allows no "+" (a snapshot's build metadata): it becomes "-".
tag=${version//+/-}
layout="$work/layout"
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
# --rootless: files are recorded as root's whoever builds, and umoci needs
# no privileges.
umoci insert --rootless --image "$layout:$tag" "$root" /
labels=(
	--config.label "org.opencontainers.image.title=causalctl"
	--config.label "org.opencontainers.image.description=Inspect causally ordered Kafka pipelines (Parsley)"
	--config.label "org.opencontainers.image.version=$version"
	--config.label "org.opencontainers.image.licenses=Apache-2.0"
	--config.label "org.opencontainers.image.source=https://github.com/causalctl/causalctl"
)
[ -n "$commit" ] && labels+=(--config.label "org.opencontainers.image.revision=$commit")
[ -n "$date" ] && labels+=(--config.label "org.opencontainers.image.created=$date")
umoci config --image "$layout:$tag" \
	--os linux --architecture "$arch" \
	--config.user 65532:65532 \
	--config.workingdir /tmp \
	--config.env TMPDIR=/tmp \
	--config.entrypoint /usr/bin/causalctl \
	--config.cmd --help \
	--config.exposedports 9464/tcp \
	"${labels[@]}" \
	${date:+--created "$date"} \
	--history.comment "causalctl $version" --history.created_by "contrib/image/build.sh"
umoci gc --layout "$layout"
mkdir -p "$(dirname "$out")"
tar -C "$layout" -cf "$out" .
echo "$out: OCI image causalctl:$tag ($arch)"
