"""Calculator plugin: two tools, and a hook that counts every tool call."""

from . import schemas, tools


def register(ctx):
    ctx.register_tool(name="calculate", toolset="calculator", schema=schemas.CALCULATE,
                      handler=tools.calculate)
    ctx.register_tool(name="unit_convert", toolset="calculator", schema=schemas.UNIT_CONVERT,
                      handler=tools.unit_convert)

    calls = []

    def count_calls(tool_name, task_id, **kwargs):
        """Runs after every tool call, the calculator's and everyone else's."""
        calls.append(tool_name)
        ctx.logger.info("tool %s called in session %s (%d so far)", tool_name, task_id,
                        len(calls))

    ctx.register_hook("post_tool_call", count_calls)
