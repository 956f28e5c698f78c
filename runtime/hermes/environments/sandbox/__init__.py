"""OS confinement of the commands the agent starts in the local environment
(``environment.local.sandbox``): bubblewrap namespaces or Landlock, chosen per runtime."""

from hermes.environments.sandbox.policy import SandboxPolicy, build_policy
from hermes.environments.sandbox.service import Choice, Sandbox

__all__ = ["Choice", "Sandbox", "SandboxPolicy", "build_policy"]
