"""Run a job with CI=1 added to the environment and post its exit status."""
import json
import os
import subprocess
import sys
import urllib.request

env = os.environ.copy()
env["CI"] = "1"
env.setdefault("LANG", "C.UTF-8")
done = subprocess.run(sys.argv[1:], env=env, check=False)
subprocess.run(["git", "status", "--short"], env={**os.environ, "GIT_PAGER": "cat"}, check=False)
body = json.dumps({"job": " ".join(sys.argv[1:]), "status": done.returncode}).encode()
request = urllib.request.Request(os.environ["CI_API_URL"] + "/status", data=body,
                                 headers={"Content-Type": "application/json"})
urllib.request.urlopen(request, timeout=10)
