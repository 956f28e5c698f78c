"""The per-home server that keeps a runtime warm (litellm loaded) for the CLI.

``hermes -z`` and ``hermes chat`` connect to it over a Unix socket in the home and
hand over their terminal (stdin, stdout, stderr), working directory, environment and
arguments; the server forks a child of its warm process that runs the very same CLI
code on them. The client stays thin: it imports neither litellm, Hydra, OmegaConf
nor the docker SDK.

Layer 3, a front door: the CLI's other half (it runs CLI commands in its children), so
``cli`` and ``daemon`` import each other and the import test counts them as one package.
``wire`` is a foundation leaf (standard library only): services read the pid file and
peer credentials there.
"""
