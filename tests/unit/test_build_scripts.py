"""bench/build: every script parses, and a source that is not there stops each with one line
(exit 2), before anything is fetched or built."""

import pathlib
import subprocess

import pytest

BUILD = pathlib.Path(__file__).resolve().parents[2] / "bench" / "build"


@pytest.mark.parametrize("script", sorted(p.name for p in BUILD.glob("*.sh")))
def test_parses(script):
    subprocess.run(["bash", "-n", str(BUILD / script)], check=True)


@pytest.mark.parametrize("script", ["ompi.sh", "ucc.sh", "osu.sh", "nvbandwidth.sh"])
def test_a_missing_source_is_one_line(script, tmp_path):
    res = subprocess.run(["bash", str(BUILD / script), str(tmp_path / "prefix"), str(tmp_path / "nothing")],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "no such file or folder" in lines[0], res.stderr


def test_the_open_mpi_patches_name_their_upstream_commit():
    patches = sorted((BUILD / "patches").glob("openmpi-*.patch"))
    assert patches
    for p in patches:
        text = p.read_text()
        assert text.startswith("Upstream: open-mpi/ompi") and "\nFrom " in text and "\n--- a/" in text


def test_the_cluster_packages_keep_what_tc_links():
    """bench/lib/debs.sh: tc (.ci/cluster-ctl.sh degrade on the GPU cluster) links libxtables12,
    which the GPU node lacks ("libxtables.so.12: cannot open"): not skipped, and checked."""
    debs = BUILD.parent / "lib" / "debs.sh"
    skip = subprocess.run(["bash", "-c", f'eval "$(sed -n "/^SKIP=(/,/^)/p" {debs})"; printf "%s\\n" "${{SKIP[@]}}"'],
                          capture_output=True, text=True, check=True).stdout.split()
    assert "libtirpc3" in skip and "libxtables12" not in skip
    assert '"$root"/{bin,sbin}/{ip,tc}' in debs.read_text()
