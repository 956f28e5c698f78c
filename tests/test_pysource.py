"""parse_python survives a parse that starts while another builds its tree (gh-106905)."""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hermes.pysource import parse_python

SOURCE = (Path(__file__).resolve().parent.parent / "runtime" / "hermes" / "skills"
          / "guard.py").read_text(encoding="utf-8")


def _deeper(levels: int, parse: Callable[[str], object]) -> None:
    """A parse from further down the stack: the constructor's counter starts elsewhere."""
    if levels:
        _deeper(levels - 1, parse)
    else:
        parse("x = 1")


@contextmanager
def a_parse_during_the_next_collections(times: int,
                                        parse: Callable[[str], object]) -> Iterator[list[int]]:
    """The next ``times`` garbage collections each parse a line, as another thread's or a
    finaliser's parse would land in the middle of building a big tree."""
    done: list[int] = []

    def collect(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and len(done) < times:
            done.append(1)
            _deeper(20, parse)

    gc.callbacks.append(collect)
    try:
        yield done
    finally:
        gc.callbacks.remove(collect)


def _interleaving_breaks_ast_parse() -> bool:
    with a_parse_during_the_next_collections(1, ast.parse):
        try:
            ast.parse(SOURCE)
        except SystemError as exc:
            return "recursion depth mismatch" in str(exc)
    return False


needs_the_bug = pytest.mark.skipif(not _interleaving_breaks_ast_parse(),
                                   reason="this Python's ast.parse survives an interleaved parse")


@needs_the_bug
def test_a_parse_interrupted_by_another_still_gives_the_tree() -> None:
    with a_parse_during_the_next_collections(1, parse_python) as done:
        tree = parse_python(SOURCE, "guard.py")
    assert done, "no collection ran during the parse: the test proves nothing"
    assert ast.dump(tree) == ast.dump(ast.parse(SOURCE))


@needs_the_bug
def test_interrupted_on_every_attempt_it_fails_loudly() -> None:
    with a_parse_during_the_next_collections(1000, parse_python), \
            pytest.raises(SystemError, match="recursion depth mismatch"):
        parse_python(SOURCE)


def test_parses_from_many_threads_agree() -> None:
    results: list[str] = []
    errors: list[BaseException] = []

    def parse() -> None:
        try:
            results.append(ast.dump(parse_python(SOURCE)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=parse) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and len(set(results)) == 1 and len(results) == 4


def test_bad_source_is_a_syntax_error_as_from_ast() -> None:
    with pytest.raises(SyntaxError):
        parse_python("def (:", "bad.py")
    with pytest.raises((SyntaxError, ValueError)):  # a NUL byte: which one depends on the Python
        parse_python("x = 1\0")
