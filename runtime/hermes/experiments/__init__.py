"""A/B experiments: arms (configs) run side by side on the same tasks, scored and compared.

Layer 3, a front door (``hermes ab``): it builds runtimes for each arm and runs
conversations through them, as the CLI does, so it may import the container and every
service; nothing below imports it.
"""
