#!/usr/bin/env bash
# keep a week of logs‮
find /var/log/app -name '*.log' -mtime +7 -delete
