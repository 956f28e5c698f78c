"""The tool registry: toolsets and includes, visibility, schemas, dispatch, capping."""

from __future__ import annotations

import dataclasses
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes.errors import ToolError
from hermes.tools.base import ToolSpec, object_schema
from hermes.tools.registry import ToolRegistry, ToolsetSpec, build_tool_registry
from hermes.tools.results import ok
from hermes.tools.toolsets import ToolsetError
from test_tools_support import ALL_CORE, call, make_context, make_registry


def echo(args: dict[str, Any], **_: Any) -> str:
    return ok(echo=args)


def spec(name: str, toolset: str = "demo", **options: Any) -> ToolSpec:
    handler = options.pop("handler", echo)
    params = options.pop("parameters", object_schema())
    return ToolSpec(name, toolset, f"the {name} tool", params, handler, **options)


def test_core_toolsets_match_the_config_group_names() -> None:
    registry = make_registry()
    assert registry.names() == ["read_file", "write_file", "patch", "search_files", "terminal",
                                "process", "todo", "clarify"]
    research = build_tool_registry(["file", "todo", "clarify", "memory", "elsewhere"],
                                   ["write_file", "patch"], environ={})
    assert research.names() == ["read_file", "search_files", "todo", "clarify"]
    # memory is declared (its tools come from the memory service); nobody declares elsewhere
    assert research.unknown_toolsets() == ["elsewhere"]


def test_schemas_are_openai_function_tools() -> None:
    schemas = make_registry(["file"]).schemas()
    read = next(s for s in schemas if s["function"]["name"] == "read_file")
    assert read["type"] == "function"
    assert read["function"]["parameters"]["required"] == ["path"]
    assert read["function"]["description"]
    json.dumps(schemas)  # serialisable as-is


def test_terminal_offers_background_only_with_the_process_tool() -> None:
    def terminal_params(registry: ToolRegistry) -> dict[str, Any]:
        terminal = registry.get("terminal")
        assert terminal is not None
        return terminal.parameters["properties"]

    assert "background" in terminal_params(make_registry(["terminal", "process"]))
    assert "background" not in terminal_params(make_registry(["terminal"]))
    disabled = build_tool_registry(["terminal", "process"], ["process"], environ={})
    assert "background" not in terminal_params(disabled)


def test_includes_compose_toolsets() -> None:
    registry = ToolRegistry(frozenset({"bundle"}), environ={})
    registry.register_toolset(ToolsetSpec("bundle", includes=("inner",)))
    registry.register_toolset(ToolsetSpec("inner", includes=("leaf",)))
    registry.register_toolset(ToolsetSpec("leaf"))
    registry.register_all([spec("a", "inner"), spec("b", "leaf"), spec("c", "elsewhere")])
    assert registry.names() == ["a", "b"]
    assert make_registry(["core"]).names() == make_registry(ALL_CORE).names()


def test_include_cycles_are_refused_with_the_cycle_spelled_out() -> None:
    with pytest.raises(ToolsetError, match="cycle: a -> b -> c -> a"):
        build_tool_registry(["a"], environ={}, toolsets=[
            ToolsetSpec("a", includes=("b",)), ToolsetSpec("b", includes=("c",)),
            ToolsetSpec("c", includes=("a",))])
    with pytest.raises(ToolsetError, match="cycle: selfish -> selfish"):
        build_tool_registry(["selfish"], environ={},
                            toolsets=[ToolsetSpec("selfish", includes=("selfish",))])


def test_unknown_include_suggests_a_name() -> None:
    with pytest.raises(ToolsetError, match='unknown toolset "fiel" \\(did you mean "file"\\?\\)'):
        build_tool_registry(["mine"], environ={},
                            toolsets=[ToolsetSpec("mine", includes=("fiel",))])


def test_failed_checks_and_missing_env_hide_tools() -> None:
    def broken_check() -> bool:
        raise RuntimeError("boom")

    registry = ToolRegistry(frozenset({"demo"}), environ={"HAVE_KEY": "x", "EMPTY_KEY": ""})
    registry.register_all([
        spec("shown"), spec("unavailable", check=lambda: False), spec("broken", check=broken_check),
        spec("keyed", requires_env=("HAVE_KEY",)), spec("unkeyed", requires_env=("NO_KEY",)),
        spec("empty", requires_env=("EMPTY_KEY",)),
    ])
    assert registry.names() == ["shown", "keyed"]
    assert [s["function"]["name"] for s in registry.schemas()] == ["shown", "keyed"]
    assert registry.get("unavailable") is None


def test_duplicate_registration_is_a_programming_error() -> None:
    registry = ToolRegistry(frozenset({"demo"}), environ={})
    registry.register(spec("x"))
    with pytest.raises(ValueError, match="already registered"):
        registry.register(spec("x"))


def test_unknown_tool_lists_close_names(tmp_path: Path) -> None:
    registry, ctx = make_registry(), make_context(tmp_path)
    result = call(registry, ctx, "raed_file", "{}")
    assert 'unknown tool "raed_file"' in result["error"]
    assert "did you mean read_file" in result["error"]
    hidden = call(make_registry(["file"]), ctx, "terminal", {"command": "ls"})
    assert 'unknown tool "terminal"' in hidden["error"]


def test_raising_handlers_become_error_results(tmp_path: Path) -> None:
    def crash(args: dict[str, Any], **_: Any) -> str:
        raise KeyError("oops")

    def refuse(args: dict[str, Any], **_: Any) -> str:
        raise ToolError("not like that")

    def wrong_type(args: dict[str, Any], **_: Any) -> str:
        return {"not": "a string"}  # type: ignore[return-value]

    registry = ToolRegistry(frozenset({"demo"}), environ={})
    registry.register_all([spec("crash", handler=crash), spec("refuse", handler=refuse),
                           spec("wrong", handler=wrong_type)])
    ctx = make_context(tmp_path)
    assert call(registry, ctx, "crash", "")["error"] == "crash failed: KeyError: 'oops'"
    assert call(registry, ctx, "refuse", "")["error"] == "not like that"
    assert "returned dict instead of a JSON string" in call(registry, ctx, "wrong", "")["error"]


def test_dispatch_repairs_validates_and_reports_arguments(tmp_path: Path) -> None:
    registry = ToolRegistry(frozenset({"demo"}), environ={})
    params = object_schema(("n",), n={"type": "integer"})
    registry.register(spec("count", parameters=params))
    ctx = make_context(tmp_path)
    result = registry.dispatch("count", '```json\n{"n": "3",}\n```', ctx)
    assert not result.is_error and result.arguments == {"n": 3}
    assert json.loads(result.content) == {"echo": {"n": 3}}
    bad = registry.dispatch("count", '{"n": 1} trailing', ctx)
    assert bad.is_error and bad.arguments is None
    assert "could not parse the arguments as JSON" in json.loads(bad.content)["error"]
    assert "missing required argument" in call(registry, ctx, "count", "{}")["error"]


def test_oversized_results_spill_to_a_file(tmp_path: Path) -> None:
    big = "\n".join(f"line {i}" for i in range(5000))

    def loud(args: dict[str, Any], **_: Any) -> str:
        return ok(output=big)

    registry = ToolRegistry(frozenset({"demo"}), environ={})
    registry.register_all([spec("loud", handler=loud),
                           spec("capped", handler=loud, max_result_chars=1000)])
    ctx = make_context(tmp_path, max_result_chars=2000)
    result = registry.dispatch("loud", "{}", ctx)
    assert len(result.content) <= 2000 and result.spill_path is not None
    data = json.loads(result.content)
    assert data["truncated"] and data["total_chars"] > 2000
    assert Path(data["full_result_path"]) == result.spill_path
    assert result.spill_path.parent == ctx.spill_dir
    spilled = result.spill_path.read_text()
    assert "line 4999\n" in spilled  # readable text with real newlines, not JSON escapes
    assert stat.S_IMODE(result.spill_path.parent.stat().st_mode) == 0o700
    assert data["preview"].startswith("--- output ---\nline 0\nline 1")
    assert len(registry.dispatch("capped", "{}", ctx).content) <= 1000
    small = registry.dispatch("loud", "{}", make_context(tmp_path, max_result_chars=10**6))
    assert small.spill_path is None and json.loads(small.content)["output"] == big


def test_spill_without_a_directory_still_caps(tmp_path: Path) -> None:
    registry = ToolRegistry(frozenset({"demo"}), environ={})
    registry.register(spec("loud", handler=lambda args, **_: ok(output="x" * 5000)))
    ctx = make_context(tmp_path, max_result_chars=1000, spill_dir=None)
    result = registry.dispatch("loud", "{}", ctx)
    assert len(result.content) <= 1000 and result.spill_path is None
    assert "no spill directory" in json.loads(result.content)["note"]


def test_parallel_safe_flag() -> None:
    registry = make_registry()
    assert registry.is_parallel_safe("read_file") and registry.is_parallel_safe("search_files")
    assert not registry.is_parallel_safe("terminal")
    assert not registry.is_parallel_safe("nonexistent")


def test_registries_share_nothing(tmp_path: Path) -> None:
    one, two = make_registry(["todo"]), make_registry(["todo"])
    ctx_one, ctx_two = make_context(tmp_path / "1"), make_context(tmp_path / "2")
    call(one, ctx_one, "todo", {"todos": [{"id": "a", "content": "only in one"}]})
    assert call(two, ctx_two, "todo", {})["todos"] == []
    one.register(spec("extra", "todo"))
    assert "extra" not in two.names()


def test_a_contributed_toolset_is_active_in_every_view_of_the_registry(tmp_path: Path) -> None:
    registry = build_tool_registry(["file"], environ={})
    # a view made before the add, as a session's restricted copy of the registry is
    view = dataclasses.replace(registry, disabled_tools=frozenset({"patch"}))
    registry.add_toolset(ToolsetSpec("mcp-demo", "a demo server"),
                         [spec("mcp_demo_echo", "mcp-demo")])
    assert "mcp_demo_echo" in registry.names() and "mcp_demo_echo" in view.names()
    assert "patch" not in view.names()
    assert registry.dispatch("mcp_demo_echo", {}, make_context(tmp_path)).is_error is False


def test_a_contributed_toolset_never_replaces_a_registered_name() -> None:
    registry = build_tool_registry(["file"], environ={})
    with pytest.raises(ValueError, match="tool 'read_file' is already registered"):
        registry.add_toolset(ToolsetSpec("sneaky"), [spec("extra", "sneaky"),
                                                     spec("read_file", "sneaky")])
    with pytest.raises(ValueError, match="tool 'twice' is already registered"):
        registry.add_toolset(ToolsetSpec("double"), [spec("twice", "double"),
                                                     spec("twice", "double")])
    assert registry.get("extra") is None and "sneaky" not in registry.active_toolsets()
    with pytest.raises(ValueError, match="toolset 'file' is already registered"):
        registry.add_toolset(ToolsetSpec("file"), [spec("other", "file")])
