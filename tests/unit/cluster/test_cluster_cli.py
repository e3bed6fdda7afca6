import pytest

from cluster.cli import build_parser, main


def test_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for word in ("up", "down", "status", "list", "ci/build-control-plane.sh"):
        assert word in out


def test_up_without_binaries_fails_cleanly(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NPU_EMU_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("NPU_EMU_BIN_DIR", str(tmp_path / "no-bins"))
    assert main(["up", "--name", "x", "--nodes", "1"]) == 1
    err = capsys.readouterr().err
    assert "ci/build-control-plane.sh" in err
    assert not (tmp_path / "state" / "clusters" / "x").exists()


def test_status_and_down_of_unknown_cluster(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NPU_EMU_STATE_DIR", str(tmp_path))
    assert main(["status", "--name", "nope"]) == 1
    assert "no cluster named 'nope'" in capsys.readouterr().err
    assert main(["down", "--name", "nope"]) == 1
    assert main(["down", "--all"]) == 0
    assert main(["list"]) == 0


@pytest.mark.parametrize("name", ["UPPER", "a_b", "x-", "x" * 41])
def test_bad_cluster_names_are_refused(tmp_path, monkeypatch, capsys, name):
    monkeypatch.setenv("NPU_EMU_STATE_DIR", str(tmp_path))
    assert main(["status", f"--name={name}"]) == 2
    assert "invalid cluster name" in capsys.readouterr().err


def test_up_rejects_profile_with_cluster_spec():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["up", "--profile", "a", "--cluster-spec", "b"])


def test_bad_node_count(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NPU_EMU_STATE_DIR", str(tmp_path))
    assert main(["up", "--nodes", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
