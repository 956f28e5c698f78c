"""The building blocks of every config schema (``schema``, ``platform_schema``)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic_core import PydanticCustomError


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "empty value")
    return value


NonBlank = Annotated[str, AfterValidator(_not_blank)]
"""A string with something in it: required names, models and addresses may not be
empty or only whitespace."""


def _compiles(value: str) -> str:
    try:
        re.compile(value)
    except re.error as exc:
        raise PydanticCustomError("regex", "not a regular expression: {problem}",
                                  {"problem": str(exc)}) from None
    return value


Regex = Annotated[str, AfterValidator(_compiles)]
"""A regular expression (Python's ``re`` syntax) that compiles."""
