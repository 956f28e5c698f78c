"""The README's Safety section runs as written, in a real shell: the approvals commands,
``hermes sandbox explain`` and the three settings that widen or narrow the sandbox, each
checked by what the profile's commands are then allowed."""

from __future__ import annotations

import json
from pathlib import Path

from readme_support import bash, code_blocks, commands, section


def test_the_readme_safety_section_runs_as_written(environ, root: Path, user_home: Path,
                                                   tmp_path: Path) -> None:
    approvals = code_blocks(section("## Safety"))[0]
    sandbox, = code_blocks(section("### What local commands can touch: "
                                   "`environment.local.sandbox`"))
    root.mkdir(parents=True)  # a class approved "always" earlier, for revoke to take back
    (root / "approvals.json").write_text(json.dumps({"always": ["chmod_777", "setuid"]}))
    listed, revoked, cleared = (bash(environ, line, tmp_path) for line in commands(approvals))
    assert "chmod_777" in listed and "setuid" in listed
    assert json.loads((root / "approvals.json").read_text())["always"] == []
    explain, *settings = commands(sandbox)
    assert "read: everything except" in bash(environ, explain, tmp_path)
    for line in settings:
        bash(environ, line, tmp_path)
    found = json.loads(bash(environ, f"{explain} --json", tmp_path))
    assert str(user_home / ".cache" / "pip") in [item["path"] for item in found["writable"]]
    assert found["network"] == "off"
    passthrough = bash(environ, "hermes config get environment.local.env_passthrough", tmp_path)
    assert "GITHUB_TOKEN" in passthrough
    with_token = json.loads(bash(environ | {"GITHUB_TOKEN": "ghp-readme-1234567"},
                                 f"{explain} --json", tmp_path))
    assert with_token["environment"]["passthrough"] == ["GITHUB_TOKEN"]
