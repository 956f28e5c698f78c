"""The ``hermes`` command: one module per command group, thin (parse, call a library
function, render).

Layer 3, a front door: may import the container, every service and the foundation;
nothing below imports it. ``daemon`` is its other half (see there).
"""
