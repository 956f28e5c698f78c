"""Skills benchmark: hermes-runtime (ours) vs hermes-agent 0.19.0 (theirs), in one run.

Run from the repository root:

    .venv/bin/python bench/skills.py --theirs /path/to/hermes-agent/bin/hermes
    .venv/bin/python bench/skills.py --only index --rounds 50 --json /tmp/skills.json

Without ``--theirs``, hermes-agent is installed on first use into
``bench/.venvs/hermes-agent-0.19.0`` (``cli_startup.ensure_theirs``).

Measurements (``MEASUREMENTS``: a name and a function from the run's ``Context`` to
``Figure``s; a new measurement is one more function and one more entry):

``list``
    ``hermes skills list`` with the same 300 real-shaped skills in both homes
    (``install_skills``: 10 categories; ``<category>/<name>/``, hermes-agent's nested
    ``<category>/<group>/<name>/`` and uncategorized ``<name>/``; descriptions of 60 to
    1,000 characters, tags, required variables, references/ and scripts/ files in some,
    ``platforms: [macos]`` in a few, bodies of 1 to 8 kB): one untimed run each, then
    ``--rounds`` interleaved rounds, the order flipping every round
    (``cli_startup.measure``); median wall time. Target: ours <= 0.3x theirs.
``index``
    The system prompt's skills index for those 300 skills, in-process, ours only:
    listing, use counts and rendering, as a new session does (``skills_inputs`` plus
    ``render_index``). *cold*: a new store on a home whose parse cache exists (the first
    session of a new runtime); *warm*: the same store again (the next session of a
    running runtime). Median of ``--rounds`` x 5, wall time and this process's CPU
    time (on a busy machine the wall time includes waiting for a CPU). Target: <= 20 ms.
``review``
    The user-visible latency of a turn that triggers a background review: ``hermes -z``
    through the warm server with a review after every turn vs learning off, against a
    fake LLM that takes 300 ms per call (``bench/learning.py``, which also runs alone).
    Target: median wall on / off <= 1.05.

Exit status is 0 even when a target is missed: this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cli_startup import (
    DEFAULT_THEIRS_VENV,
    REPO,
    Command,
    add_common_arguments,
    checked_arguments,
    ensure_theirs,
    make_env,
    measure,
)

SKILLS = 300
CATEGORIES = 10
LIST_TARGET, INDEX_TARGET_MS = 0.3, 20.0


@dataclass
class Context:
    """What every measurement gets: the executables, a scratch directory, the rounds."""

    ours: Path
    theirs: Path
    tmp: Path
    rounds: int
    raw: dict[str, object] = field(default_factory=dict)
    """Every sample, for ``--json``."""


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    target: float | None = None
    """The largest value that meets the target (None: for information)."""

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "info"
        return "PASS" if self.value <= self.target else "FAIL"


WORDS = ("deploy the service", "check the logs", "roll back on errors", "rotate the keys",
         "migrate the schema", "profile the slow query", "review the diff", "tag the release",
         "clean the dataset", "train the adapter", "serve the model", "draft the summary")


def skill_text(i: int) -> str:
    """A real-shaped SKILL.md (deterministic in ``i``): hermes-agent-style frontmatter
    (version, license, tags, some required variables or platforms), a description of
    60 to 1,000 characters, then 1 to 8 kB of steps, commands and pitfalls."""
    rng = random.Random(i)
    description = f"Skill {i}: " + ", ".join(rng.choices(WORDS, k=rng.choice((3, 8, 20, 40))))
    description = description[:1000].replace(": ", " - ", 1)
    extra = ""
    if i % 7 == 0:
        extra += "required_environment_variables: [GITHUB_TOKEN]\n"
    if i % 50 == 3:
        extra += "platforms: [macos, linux]\n"
    steps = "".join(f"{n}. {rng.choice(WORDS).capitalize()} for case {i}: run "
                    f"`make step-{n} CASE={i}` and check its output.\n"
                    for n in range(1, rng.randint(8, 60)))
    return (f"---\nname: skill-{i:03d}\ndescription: {description}\nversion: 1.{i % 4}.0\n"
            f"license: MIT\n{extra}metadata:\n  hermes:\n    tags: [bench, area{i % CATEGORIES}]\n"
            f"    related_skills: [skill-{(i + 1) % SKILLS:03d}]\n---\n\n# Skill {i}\n\n"
            f"## When to use\n\n{description}\n\n## Steps\n\n{steps}\n## Pitfalls\n\n"
            + "- Something that went wrong before, and how it was fixed.\n" * rng.randint(2, 12))


def skill_dir(home: Path, i: int) -> Path:
    """Where skill ``i`` lives: most in ``<category>/<name>/``, one in six nested one
    level deeper (hermes-agent's ``mlops/training/axolotl``), one in twenty with no
    category."""
    skills, name = home / "skills", f"skill-{i:03d}"
    if i % 20 == 19:
        return skills / name
    category = skills / f"area{i % CATEGORIES}"
    return category / f"group{i % 3}" / name if i % 6 == 5 else category / name


def install_skills(home: Path) -> None:
    for i in range(SKILLS):
        directory = skill_dir(home, i)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "SKILL.md").write_text(skill_text(i), encoding="utf-8")
        if i % 4 == 0:
            (directory / "references").mkdir()
            (directory / "references" / "notes.md").write_text(f"# Notes {i}\n" * 40)
        if i % 5 == 0:
            (directory / "scripts").mkdir()
            (directory / "scripts" / "run.sh").write_text(f"#!/bin/sh\nmake case-{i}\n")


def measure_list(ctx: Context) -> list[Figure]:
    """``hermes skills list``, ours vs theirs (see the module docstring)."""
    envs = {}
    for side in ("ours", "theirs"):
        (ctx.tmp / side).mkdir()
        envs[side] = make_env(ctx.tmp / side)
        install_skills(ctx.tmp / side / ".hermes")
    ours = Command("ours skills list", [str(ctx.ours), "skills", "list"], envs["ours"])
    theirs = Command("theirs skills list", [str(ctx.theirs), "skills", "list"], envs["theirs"])
    for command in (ours, theirs):
        check_lists_all(command)
    measure([ours], [theirs], ctx.rounds)
    ctx.raw["list"] = {c.label: {"wall_ms": c.wall_ms, "maxrss_kib": c.maxrss_kib}
                       for c in (ours, theirs)}
    return [Figure("ours skills list", ours.median_ms, "ms"),
            Figure("theirs skills list", theirs.median_ms, "ms"),
            Figure("ours / theirs", ours.median_ms / theirs.median_ms, "x", LIST_TARGET)]


def check_lists_all(command: Command) -> None:
    """Both sides must find every skill (the nested ones too) for the race to be fair."""
    done = subprocess.run(command.argv, env=command.env, capture_output=True, text=True,
                          check=True, stdin=subprocess.DEVNULL)
    found = set(re.findall(r"skill-\d{3}", done.stdout))
    if len(found) != SKILLS:
        sys.exit(f"{command.label} lists {len(found)} of the {SKILLS} skills")


def measure_index(ctx: Context) -> list[Figure]:
    """The prompt's skills index for 300 skills, cold and warm (module docstring)."""
    sys.path.insert(0, str(REPO / "runtime"))
    from hermes.skills.index import render_index
    from hermes.skills.store import BUNDLED_DIR, SkillsStore

    home = ctx.tmp / "index-home"
    install_skills(home)

    def new_store() -> SkillsStore:
        return SkillsStore(home / "skills", bundled=BUNDLED_DIR,
                           cache_file=home / ".cache" / "skills.json", warn=print)

    def build(store: SkillsStore) -> str:
        return render_index(store.list(), store.index_max_chars, store.records())

    text = build(new_store())  # fills the parse cache, as the first runtime on a home does
    assert text.count("\n- ") > 20, text[:400]
    samples: dict[str, list[float]] = {"cold wall": [], "cold cpu": [], "warm wall": [],
                                       "warm cpu": []}
    warm_store = new_store()
    for _ in range(ctx.rounds * 5):
        for kind, store in (("cold", None), ("warm", warm_store)):
            wall, cpu = time.perf_counter(), time.process_time()
            build(store or new_store())
            samples[f"{kind} wall"].append((time.perf_counter() - wall) * 1000)
            samples[f"{kind} cpu"].append((time.process_time() - cpu) * 1000)
    ctx.raw["index"] = samples | {"chars": len(text)}
    return [*(Figure(f"index, {kind}", statistics.median(values), "ms", INDEX_TARGET_MS)
              for kind, values in samples.items()),
            Figure("index size", len(text), "chars")]


def measure_review(ctx: Context) -> list[Figure]:
    """A turn that triggers a review vs learning off (module docstring)."""
    from learning import TARGET, review_latency

    (ctx.tmp / "review").mkdir()
    on, off = review_latency(ctx.ours, ctx.rounds, ctx.tmp / "review")
    ctx.raw["review"] = {command.label: command.wall_ms for command in (on, off)}
    return [Figure("-z, learning on", on.median_ms, "ms"),
            Figure("-z, learning off", off.median_ms, "ms"),
            Figure("on / off", on.median_ms / off.median_ms, "x", TARGET)]


MEASUREMENTS: dict[str, Callable[[Context], list[Figure]]] = {
    "list": measure_list,
    "index": measure_index,
    "review": measure_review,
}
"""Each measurement by name, run in this order (``--only`` picks some)."""


def report(figures: dict[str, list[Figure]]) -> None:
    for name, rows in figures.items():
        print(f"\n{name}:")
        for figure in rows:
            goal = "" if figure.target is None else f"  (target <= {figure.target:g})"
            print(f"  {figure.verdict:<4}  {figure.name:<22} {figure.value:10.2f} "
                  f"{figure.unit}{goal}")


def main() -> int:
    return run_benchmark(__doc__ or "", MEASUREMENTS, "skills")


def run_benchmark(doc: str, measurements: dict[str, Callable[[Context], list[Figure]]],
                  label: str) -> int:
    """Parse the common options, run the chosen ``measurements`` (the one called ``list``
    compares with hermes-agent, which is installed for it when needed), report."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10, help="timed rounds (default: 10)")
    ap.add_argument("--only", action="append", choices=list(measurements),
                    help="run only this measurement (repeatable)")
    add_common_arguments(ap)
    args = checked_arguments(ap)
    chosen = args.only or list(measurements)
    theirs = args.theirs or (ensure_theirs(DEFAULT_THEIRS_VENV) if "list" in chosen else None)
    tmp = Path(tempfile.mkdtemp(prefix=f"hermes-bench-{label}-"))
    ctx = Context(args.ours, theirs or Path("-"), tmp, args.rounds)
    try:
        figures = {name: measurements[name](ctx) for name in chosen}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{args.rounds} rounds; nproc={len(os.sched_getaffinity(0))}; load "
          f"{os.getloadavg()[0]:.1f}; python {platform.python_version()}; ours={args.ours}; "
          f"theirs={theirs}")
    report(figures)
    if args.json:
        args.json.write_text(json.dumps({
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "rounds": args.rounds,
            "figures": {n: [asdict(f) | {"verdict": f.verdict} for f in rows]
                        for n, rows in figures.items()}, "raw": ctx.raw}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
