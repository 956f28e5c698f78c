"""The gateway's log: one JSON line per event in ``logs/gateway.log`` of each home,
rotated at 5 MB (3 kept), mode 0600, secrets of that home redacted. Other logs of a
home (``logs/plugins.log``) are written the same way (``home_logger``)."""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from hermes.errors import disk_full
from hermes.fsutil import private_dir
from hermes.home import Home
from hermes.redact import build_redactor

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3


class _PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """Every file it opens, rotated ones included, is 0600. A line the disk has no room
    for is dropped without logging's traceback on stderr: what cannot be written next
    (the session) reports the full disk in one line."""

    def _open(self):  # type: ignore[no-untyped-def]
        stream = super()._open()
        os.chmod(self.baseFilename, 0o600)
        return stream

    def handleError(self, record: logging.LogRecord) -> None:
        if disk_full(sys.exc_info()[1] or Exception()) is None:
            super().handleError(record)


class JsonLines(logging.Formatter):
    def __init__(self, redact: Callable[[str], str]):
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
                 "level": record.levelname.lower(), "event": record.getMessage(),
                 **getattr(record, "fields", {})}
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(entry, ensure_ascii=False, default=str))


def gateway_logger(home: Home, environ: Mapping[str, str],
                   environment_files: Sequence[str] = ()) -> logging.Logger:
    """This home's gateway logger (its own handler; nothing reaches the root logger)."""
    return home_logger(home, environ, "gateway", environment_files)


def home_logger(home: Home, environ: Mapping[str, str], name: str,
                environment_files: Sequence[str] = ()) -> logging.Logger:
    """The logger writing ``logs/<name>.log`` of ``home`` as JSON lines (rotated, 0600,
    secrets redacted); nothing reaches the root logger."""
    logger = logging.getLogger(f"hermes.{name}[{home.path}]")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    if not logger.handlers:
        private_dir(home.logs_dir)
        path = home.logs_dir / f"{name}.log"
        handler = _PrivateRotatingFile(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                       encoding="utf-8")
        handler.setFormatter(JsonLines(build_redactor(home.env_file, environ,
                                                      environment_files)))
        logger.addHandler(handler)
    return logger


def close_logger(logger: logging.Logger) -> None:
    for handler in list(logger.handlers):
        handler.close()
        logger.removeHandler(handler)
