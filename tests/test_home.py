"""Home resolution: -p flag, HERMES_HOME, sticky active profile, default."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes.cli.main import split_profile_flag
from hermes.errors import ProfileError
from hermes.home import default_root, home_from_path, resolve_home, validate_profile_name


def make_profile(root: Path, name: str) -> Path:
    path = root / "profiles" / name
    path.mkdir(parents=True)
    return path


def test_default_is_the_root(root: Path, environ: dict[str, str]) -> None:
    home = resolve_home(None, environ)
    assert (home.name, home.path, home.root) == ("default", root, root)


def test_precedence_flag_over_env_over_sticky_over_default(root: Path, environ: dict[str, str],
                                                            tmp_path: Path) -> None:
    for name in ("flagged", "sticky"):
        make_profile(root, name)
    (root / "active_profile").write_text("sticky\n")
    assert resolve_home(None, environ).name == "sticky"
    elsewhere = tmp_path / "elsewhere"
    env = environ | {"HERMES_HOME": str(elsewhere)}
    assert resolve_home(None, env).path == elsewhere
    # -p wins over HERMES_HOME; the root is derived from HERMES_HOME when it is set.
    in_root = environ | {"HERMES_HOME": str(root / "profiles" / "sticky")}
    assert resolve_home("flagged", in_root).path == root / "profiles" / "flagged"


def test_root_is_derived_from_a_profile_home(root: Path) -> None:
    home = home_from_path(root / "profiles" / "work")
    assert (home.name, home.root) == ("work", root)
    assert default_root({"HERMES_HOME": str(root / "profiles" / "work")}) == root


def test_missing_and_deleted_profiles_are_errors(root: Path, environ: dict[str, str]) -> None:
    with pytest.raises(ProfileError, match="does not exist"):
        resolve_home("ghost", environ)
    (root / "profiles" / ".tombstones").mkdir(parents=True)
    (root / "profiles" / ".tombstones" / "ghost").write_text("x")
    with pytest.raises(ProfileError, match="was deleted"):
        resolve_home("ghost", environ)
    assert not (root / "profiles" / "ghost").exists()


@pytest.mark.parametrize("name", ["..", "a/b", "../x", "Upper", "-x", "", "a" * 65, "x y",
                                  "default", "profiles"])
def test_bad_names_are_refused_before_touching_disk(name: str, root: Path,
                                                     environ: dict[str, str]) -> None:
    with pytest.raises(ProfileError):
        validate_profile_name(name)
    if name not in ("default",):
        with pytest.raises(ProfileError):
            resolve_home(name, environ)
    assert not root.exists()


def test_profile_flag_is_taken_from_anywhere() -> None:
    assert split_profile_flag(["config", "show", "-p", "w", "x=1"]) == ("w", ["config", "show",
                                                                             "x=1"])
    assert split_profile_flag(["--profile=w", "doctor"]) == ("w", ["doctor"])
    assert split_profile_flag(["chat", "--", "-p", "w"]) == (None, ["chat", "--", "-p", "w"])


def test_child_env_carries_home_explicitly(root: Path) -> None:
    home = home_from_path(root / "profiles" / "work")
    env = home.child_env({"PATH": "/bin", "HERMES_HOME": "/somewhere/else"})
    assert env == {"PATH": "/bin", "HERMES_HOME": str(root / "profiles" / "work")}
