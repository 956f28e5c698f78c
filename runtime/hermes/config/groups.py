"""The config groups (kept apart from the schema so cheap readers skip pydantic)."""

GROUPS: tuple[str, ...] = ("provider", "toolsets", "memory", "environment", "platforms",
                          "browser", "web", "stt", "tts")
"""Config groups, in the order the packaged defaults list declares them."""
