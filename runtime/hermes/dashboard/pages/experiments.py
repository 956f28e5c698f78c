"""The Experiments page: a profile's ``hermes ab`` experiments (as ``hermes ab list``
reads them), and one experiment's comparison table, plain-words tests and runs (as
``hermes ab show --runs``) with the charts of its HTML report (``hermes ab report``'s own
SVG, ``experiments.report.charts``, which escapes every text it draws). Read-only: running
an experiment stays the CLI's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import HTMLResponse
from markupsafe import Markup

from hermes.dashboard.page import Page, open_page
from hermes.errors import UserError

router = APIRouter()
PageOf = Annotated[Page, Depends(open_page)]


@dataclass(frozen=True)
class Listed:
    """One experiment as the list shows it."""

    id: str
    created: float
    arms: list[str]
    tasks: int
    done: int
    total: int
    spent: float
    rerun_of: str | None


def _base(page: Page) -> str:
    return f"/p/{quote(page.profile)}/experiments"


@router.get("/p/{profile}/experiments", response_class=HTMLResponse)
def experiments_page(page: PageOf) -> HTMLResponse:
    from hermes.experiments.render import view_of
    from hermes.experiments.store import list_ids, open_experiment

    listed, error = [], None
    try:
        for experiment_id in list_ids(page.home):
            experiment = open_experiment(page.home, experiment_id)
            view, rows = view_of(experiment)
            listed.append(Listed(experiment.id, experiment.created,
                                 [arm.name for arm in experiment.arms], len(experiment.tasks),
                                 view.done, view.total, sum(r["cost"] or 0.0 for r in rows),
                                 experiment.rerun_of))
    except UserError as exc:
        error = str(exc)
    return page.render("experiments/index.html", "experiments", listed=listed, error=error,
                       base=_base(page))


@router.get("/p/{profile}/experiments/{experiment_id}", response_class=HTMLResponse)
def experiment_page(page: PageOf, experiment_id: str) -> HTMLResponse:
    from hermes.experiments.render import table_rows, view_of
    from hermes.experiments.report import charts
    from hermes.experiments.store import list_ids, open_experiment

    if experiment_id not in list_ids(page.home):  # never a path outside experiments/
        raise HTTPException(404, f"No experiment {experiment_id!r} in {page.profile}.")
    try:
        experiment = open_experiment(page.home, experiment_id)
        view, rows = view_of(experiment)
    except UserError as exc:
        return page.render("experiments/index.html", "experiments", listed=[],
                           error=str(exc), base=_base(page), code=400)
    header, cells = table_rows(view)
    drawn: list[tuple[str, Any]] = [(title, Markup(svg))  # noqa: S704 - escaped by charts
                                    for title, svg in charts(experiment, view, rows)]
    return page.render(
        "experiments/experiment.html", "experiments", experiment=experiment, view=view,
        header=header, cells=cells,
        sentences=view.comparison.sentences if view.comparison else [], charts=drawn,
        runs=rows, base=_base(page))
