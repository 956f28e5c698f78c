"""File tools on real files: read_file, write_file, patch, search_files (ripgrep and Python)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from hermes.tools.context import ToolContext
from hermes.tools.registry import ToolRegistry, build_tool_registry
from test_tools_support import call, make_context, make_registry


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_context(tmp_path)


@pytest.fixture
def tools() -> ToolRegistry:
    return make_registry(["file"])


def test_read_file_numbers_lines_and_pages(ctx: ToolContext, tools: ToolRegistry) -> None:
    (ctx.cwd / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    whole = call(tools, ctx, "read_file", {"path": "notes.txt"})
    assert whole["content"].splitlines()[0] == "     1|line 1"
    assert whole["total_lines"] == 10 and "next_offset" not in whole
    page = call(tools, ctx, "read_file", {"path": "notes.txt", "offset": 4, "limit": 3})
    assert page["content"] == "     4|line 4\n     5|line 5\n     6|line 6"
    assert (page["start_line"], page["end_line"], page["next_offset"]) == (4, 6, 7)
    absolute = call(tools, ctx, "read_file", {"path": str(ctx.cwd / "notes.txt"), "limit": 1})
    assert absolute["path"] == str(ctx.cwd / "notes.txt")


def test_read_file_errors(ctx: ToolContext, tools: ToolRegistry) -> None:
    (ctx.cwd / "notes.txt").write_text("one\ntwo\n")
    (ctx.cwd / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    (ctx.cwd / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with open(ctx.cwd / "huge.log", "wb") as handle:
        handle.truncate(11 * 1024 * 1024)
    cases = {
        "nots.txt": "does not exist (similar files here: notes.txt)",
        "blob.bin": "looks like a binary file",
        "latin.txt": "is not UTF-8 text",
        "huge.log": "too large to read",
        ".": "is a directory",
    }
    for path, message in cases.items():
        assert message in call(tools, ctx, "read_file", {"path": path})["error"], path
    past = call(tools, ctx, "read_file", {"path": "notes.txt", "offset": 9})
    assert "past the end" in past["error"] and "2 lines" in past["error"]
    zero = call(tools, ctx, "read_file", {"path": "notes.txt", "offset": 0})
    assert "at least 1" in zero["error"]


def test_read_file_cuts_very_long_lines(ctx: ToolContext, tools: ToolRegistry) -> None:
    (ctx.cwd / "min.js").write_text("x" * 5000)
    content = call(tools, ctx, "read_file", {"path": "min.js"})["content"]
    assert "[line cut, 5000 characters]" in content and len(content) < 2100


def test_write_file_creates_and_overwrites(ctx: ToolContext, tools: ToolRegistry) -> None:
    created = call(tools, ctx, "write_file", {"path": "src/deep/new.py", "content": "a = 1\n"})
    target = ctx.cwd / "src/deep/new.py"
    assert created["created"] and created["bytes_written"] == 6 and created["lines"] == 1
    assert target.read_text() == "a = 1\n"
    os.chmod(target, 0o750)
    again = call(tools, ctx, "write_file", {"path": "src/deep/new.py", "content": "b = 2\n"})
    assert not again["created"] and target.read_text() == "b = 2\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750  # permissions survive the rewrite
    directory = call(tools, ctx, "write_file", {"path": "src", "content": ""})
    assert "is a directory" in directory["error"]


def test_write_through_a_symlink_changes_the_target(ctx: ToolContext, tools: ToolRegistry) -> None:
    real = ctx.cwd / "real.txt"
    real.write_text("old")
    (ctx.cwd / "link.txt").symlink_to(real)
    call(tools, ctx, "write_file", {"path": "link.txt", "content": "new"})
    assert real.read_text() == "new" and (ctx.cwd / "link.txt").is_symlink()


def test_patch_replaces_exactly_once(ctx: ToolContext, tools: ToolRegistry) -> None:
    target = ctx.cwd / "app.py"
    target.write_bytes(b"def f():\r\n    return 1\r\n")
    result = call(tools, ctx, "patch", {"path": "app.py", "old_string": "return 1",
                                        "new_string": "return 2"})
    assert result["replacements"] == 1
    assert "-    return 1" in result["diff"] and "+    return 2" in result["diff"]
    assert target.read_bytes() == b"def f():\r\n    return 2\r\n"  # CRLF kept


def test_patch_errors_and_replace_all(ctx: ToolContext, tools: ToolRegistry) -> None:
    target = ctx.cwd / "app.py"
    target.write_text("x = 1\ny = 1\nz = 2\n")

    def patch(old: str, new: str, **extra: object) -> dict[str, object]:
        return call(tools, ctx, "patch", {"path": "app.py", "old_string": old,
                                          "new_string": new, **extra})

    missing = patch("x = 3", "x = 4")["error"]
    assert "was not found" in missing and "closest line 1: 'x = 1'" in missing
    many = patch("= 1", "= 9")["error"]
    assert "occurs 2 times" in many and "replace_all=true" in many
    assert "empty" in patch("", "x")["error"]
    assert "the same" in patch("x = 1", "x = 1")["error"]
    assert target.read_text() == "x = 1\ny = 1\nz = 2\n"  # errors change nothing
    assert patch("= 1", "= 9", replace_all=True)["replacements"] == 2
    assert target.read_text() == "x = 9\ny = 9\nz = 2\n"
    gone = call(tools, ctx, "patch", {"path": "nope.py", "old_string": "a", "new_string": "b"})
    assert "does not exist" in gone["error"]


def make_tree(root: Path) -> None:
    """A small repository; ripgrep skips node_modules by .gitignore, Python by name."""
    (root / "src/pkg").mkdir(parents=True, exist_ok=True)
    (root / "src/pkg/core.py").write_text("import os\n\ndef handler():\n    return 'TODO later'\n")
    (root / "src/util.py").write_text("# todo: tidy\nVALUE = 42\n")
    (root / "README.md").write_text("Read me. TODO: docs\n")
    (root / "node_modules/dep").mkdir(parents=True)
    (root / "node_modules/dep/index.py").write_text("TODO hidden in deps\n")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("TODO in git\n")
    (root / ".gitignore").write_text("node_modules/\n")
    (root / "data.bin").write_bytes(b"TODO\x00binary")


RIPGREP = shutil.which("rg")
ENGINES = [pytest.param(None, id="python"),
           pytest.param(RIPGREP, id="ripgrep",
                        marks=pytest.mark.skipif(RIPGREP is None, reason="rg not installed"))]


@pytest.mark.parametrize("ripgrep", ENGINES)
def test_search_content(ctx: ToolContext, ripgrep: str | None) -> None:
    make_tree(ctx.cwd)
    tools = build_tool_registry(["file"], environ={}, ripgrep=ripgrep)
    found = call(tools, ctx, "search_files", {"pattern": "TODO"})
    assert found["engine"] == ("ripgrep" if ripgrep else "python")
    assert [(m["path"], m["line"]) for m in found["matches"]] == [
        ("README.md", 1), ("src/pkg/core.py", 4)]
    assert found["matches"][1]["text"] == "    return 'TODO later'"
    loose = call(tools, ctx, "search_files", {"pattern": "todo", "ignore_case": True,
                                              "file_glob": "*.py"})
    assert [m["path"] for m in loose["matches"]] == ["src/pkg/core.py", "src/util.py"]
    regex = call(tools, ctx, "search_files", {"pattern": r"^VALUE = \d+$", "path": "src"})
    assert regex["matches"] == [{"path": "src/util.py", "line": 2, "text": "VALUE = 42"}]
    capped = call(tools, ctx, "search_files", {"pattern": ".", "limit": 2})
    assert capped["count"] == 2 and capped["truncated"]
    assert call(tools, ctx, "search_files", {"pattern": "nothing-here"})["matches"] == []
    if ripgrep:  # the Python engine's regex errors are tested below
        bad = call(tools, ctx, "search_files", {"pattern": "(unclosed"})
        assert "search failed" in bad["error"] and "regex" in bad["error"]


@pytest.mark.parametrize("ripgrep", ENGINES)
def test_search_file_names(ctx: ToolContext, ripgrep: str | None) -> None:
    make_tree(ctx.cwd)
    tools = build_tool_registry(["file"], environ={}, ripgrep=ripgrep)
    found = call(tools, ctx, "search_files", {"pattern": "*.py", "target": "files"})
    assert found["files"] == ["src/pkg/core.py", "src/util.py"]
    one = call(tools, ctx, "search_files", {"pattern": "*.py", "target": "files", "limit": 1})
    assert one["files"] == ["src/pkg/core.py"] and one["truncated"]


def test_search_errors(ctx: ToolContext, tools: ToolRegistry) -> None:
    python = build_tool_registry(["file"], environ={}, ripgrep=None)
    assert "invalid regular expression" in call(python, ctx, "search_files",
                                                 {"pattern": "(unclosed"})["error"]
    assert "does not exist" in call(tools, ctx, "search_files",
                                    {"pattern": "x", "path": "missing"})["error"]
    bad_target = call(tools, ctx, "search_files", {"pattern": "x", "target": "dirs"})
    assert '"target" must be one of: content, files' in bad_target["error"]
