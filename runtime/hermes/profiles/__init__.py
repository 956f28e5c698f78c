"""Profiles: create, copy, rename, delete, export and import homes, their aliases and
metadata, each change undone as a whole when a step fails (``rollback``).

A service (layer 1): imports the foundation only (``errors``, ``fsutil``, ``home``,
``credentials``, ``config``); the CLI's ``profile`` commands and the experiments use it.
"""
