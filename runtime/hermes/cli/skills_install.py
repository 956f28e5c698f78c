"""``hermes skills install``, ``update`` and ``audit``: fetch, scan, show, ask, copy."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from hermes.cli.app import confirm, out
from hermes.cli.skills_render import warn
from hermes.errors import UserError
from hermes.skills.guard import Finding, scan_tree
from hermes.skills.install import (
    Candidate,
    Fetched,
    Source,
    apply_update,
    check_candidate,
    fetch,
    find_candidates,
    install_ready,
    refusals_of,
    top_of,
    tree_diff,
)
from hermes.skills.lockfile import LockEntry, content_hash, lock_or_none, read_lock
from hermes.skills.model import SKILL_FILE
from hermes.skills.store import SkillsStore


def run_install(store: SkillsStore, source: str, category: str | None, *, yes: bool,
                force: bool) -> None:
    """Install every skill of ``source`` that can be: one that cannot (malformed, already
    here without --force, scan findings under --yes without --force) is listed at the
    end (exit code 2) and keeps none of the others out; one for another platform is
    skipped with a line."""
    read_lock(store.directory)  # an unreadable lock is refused before anything is fetched
    with fetch(Source.parse(source)) as fetched:
        candidates = find_candidates(fetched, store, category)
        for candidate in candidates:
            _describe(candidate)
        refusals = refusals_of(candidates, yes=yes, force=force)
        ready = [c for c in candidates if not c.skip and id(c) not in refusals]
        if not ready and not refusals:
            raise UserError(f"{source}: no skill there is for this platform (see above)")
        if ready and not yes:
            consent([c.name for c in ready if c.findings], yes, force,
                    f"install {_count(ready)}", what="nothing installed")
        installed = install_ready(store, ready, fetched, refusals)
        for skill in installed:
            out(f"installed {skill.name} in {skill.path}")
    if refusals:
        done = f"installed the other {_count(installed)}" if installed else \
            "nothing installed"
        raise UserError(f"{'; '.join(refusals.values())}; {done}")


def _describe(candidate: Candidate) -> None:
    if candidate.problem:
        out(f"  ✗ {candidate.name}: cannot be installed: {candidate.problem}")
        return
    if candidate.skip:
        out(f"  - {candidate.name}: skipped: {candidate.skip}")
        return
    state = f"{len(candidate.findings)} finding(s)" if candidate.findings else "scan: clean"
    replaces = f"; replaces {candidate.replaces.path}" if candidate.replaces else ""
    out(f"  {candidate.name} → skills/{candidate.target} ({state}{replaces})")
    for note in candidate.notes:
        out(f"      note: {note}")
    show_findings(candidate.findings)


def show_findings(findings: Sequence[Finding]) -> None:
    for finding in findings:
        out(f"      ! {finding}")


def consent(flagged: Sequence[str], yes: bool, force: bool, question: str,
            what: str) -> None:
    """Ask (or take --yes); findings (in the ``flagged`` names) need --force when nobody
    is asked. Also ``hermes plugins install``'s."""
    if flagged and yes and not force:
        raise UserError(f"the scan found problems in {', '.join(flagged)} "
                        f"(listed above); {what} — pass --force to go ahead anyway")
    if yes:
        return
    warning = " despite the scan's findings" if flagged else ""
    if not confirm(f"{question}{warning}?", refusal=what):
        raise UserError(f"not confirmed; {what}")


def _count(items: Sequence[object]) -> str:
    return f"{len(items)} skill{'s' if len(items) != 1 else ''}"


def run_update(store: SkillsStore, names: Sequence[str], *, yes: bool, force: bool) -> None:
    entries = read_lock(store.directory)
    unknown = [n for n in names if n not in entries]
    if unknown:
        raise UserError(f"{', '.join(unknown)}: not installed with `hermes skills install` "
                        f"(installed: {', '.join(sorted(entries)) or 'none'})")
    targets = list(names) or sorted(entries)
    if not targets:
        out("no installed skills (`hermes skills install SOURCE` installs some)")
        return
    by_source: dict[str, list[str]] = {}
    for name in targets:
        by_source.setdefault(entries[name].source, []).append(name)
    for source, group in by_source.items():
        with fetch(Source.parse(source)) as fetched:
            for name in group:
                _update_one(store, name, entries[name], fetched, yes=yes, force=force)


def _update_one(store: SkillsStore, name: str, entry: LockEntry, fetched: Fetched, *,
                yes: bool, force: bool) -> None:
    top = top_of(fetched)
    new = top / entry.subdir
    current = store.directory / entry.path
    if not (current / SKILL_FILE).is_file():
        where = ("archived — `hermes skills restore` it first" if name in store.archived()
                 else "gone from this profile — `hermes skills install` it again")
        out(f"{name}: {where}; not updated")
        return
    if not (new / SKILL_FILE).is_file():
        out(f"{name}: no longer in {entry.source} ({entry.subdir}); kept as it is")
        return
    if content_hash(new) == content_hash(current):
        out(f"{name}: up to date")
        return
    candidate = check_candidate(store, new, top)
    if candidate.problem or candidate.name != name:
        problem = candidate.problem or f"it is now called {candidate.name}"
        raise UserError(f"{name}: the new version cannot be installed: {problem}")
    sys.stdout.writelines(tree_diff(current, new, name))
    if content_hash(current) != entry.hash:
        out(f"note: {name} was changed here since it was installed; updating replaces that")
    show_findings(candidate.findings)
    consent([name] if candidate.findings else [], yes, force, f"update {name}",
            what=f"{name} not updated")
    apply_update(store, name, candidate, fetched)
    out(f"updated {name}")


def run_audit(store: SkillsStore) -> bool:
    """Scan every non-bundled skill again; True when anything was found."""
    found = store.scan()
    entries = lock_or_none(store.directory, warn)
    anything = bool(found.problems)
    for problem in found.problems:
        out(f"✗ {problem}")
        if problem.field == "content":  # withheld by the scan: every finding, to fix them
            show_findings(scan_tree(problem.file.parent))
    for skill in found.skills:
        if skill.source is not None and skill.source.kind == "bundled":
            continue
        scanned = scan_tree(skill.path, notes=True)
        findings = [finding for finding in scanned if not finding.note]
        entry = entries.get(skill.name) if skill.writable else None
        drift = entry is not None and content_hash(skill.path) != entry.hash
        anything = anything or bool(findings)
        note = "; changed since installed" if drift else ""
        verdict = f"! {len(findings)} finding(s)" if findings else "✓ clean"
        out(f"{skill.name} ({skill.origin}): {verdict}{note}")
        show_findings(findings)
        for finding in scanned:
            if finding.note:
                out(f"      note: {finding}")
    return anything
