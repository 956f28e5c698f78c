"""The NixOS module's ``extraSkills``: linked read-only into one directory that the
profile's layer names as ``skills.directories``, where the runtime finds the skills
(after the profile's own, before the bundled ones)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hermes.config import compose_config
from hermes.container import build_runtime
from hermes.home import home_for
from test_nix import evaluate, nixpkgs_lib, render_layer, two_profiles  # noqa: F401
from test_skills_store import put, skill_md


def test_extra_skills_are_linked_and_named_in_the_layer(nixpkgs_lib: str) -> None:  # noqa: F811
    deployed: dict[str, Any] = evaluate(nixpkgs_lib, two_profiles(
        extra='profiles.work.extraSkills = [ "/srv/hermes-skills/deploy" '
              '"/nix/store/0123456789abcdfghijklmnpqrsvwxyz-ops-skills" ];'))
    assert deployed["failedAssertions"] == []
    skills = deployed["skillDirs"]["work"]
    assert skills["entries"] == [
        {"name": "deploy", "path": "/srv/hermes-skills/deploy"},
        {"name": "ops-skills", "path": "/nix/store/0123456789abcdfghijklmnpqrsvwxyz-ops-skills"}]
    work = yaml.safe_load(deployed["layer"]["files"]["profiles/work/config.yaml"])
    assert work["skills"] == {"directories": [skills["path"]]}
    assert work["plugins"]["directories"]  # beside the plugins' directory, not instead
    research = yaml.safe_load(deployed["layer"]["files"]["profiles/research/config.yaml"])
    assert "skills" not in research


def test_the_runtime_finds_the_layers_skills_after_its_own(root: Path, tmp_path: Path,
                                                           environ: dict[str, str]) -> None:
    linked = tmp_path / "store" / "hermes-work-skills"
    put(linked, "deploy/SKILL.md", skill_md("deploy", "Deploy as the admin wrote it"))
    put(linked, "ops-skills/backup/SKILL.md", skill_md("backup", "Back up the database"))
    layer = render_layer(tmp_path, {"work": {"skills": {"directories": [str(linked)]}}})
    home = home_for(root, "work").ensure()
    put(home.skills_dir, "deploy/SKILL.md", skill_md("deploy", "The profile's own deploy"))
    env = environ | {"HERMES_CONFIG_LAYERS": str(layer)}
    runtime = build_runtime(home, compose_config(home, env).config, env)
    found = runtime.container.skills().scan()
    by_name = {s.name: s for s in found.skills}
    assert by_name["deploy"].description == "The profile's own deploy"
    assert (by_name["backup"].origin, by_name["backup"].category) == (str(linked), "ops-skills")
    assert not by_name["backup"].writable
    assert [(hidden.origin, winner.origin) for hidden, winner in found.shadowed] == [
        (str(linked), "home")]
