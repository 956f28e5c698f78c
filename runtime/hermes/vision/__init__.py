"""Images in: images at URLs fetched under the web's address rules (``fetch``) and the
``vision_analyze`` tool (``tool``). Turns carrying images are ``hermes.agent``'s
(``attachments``, ``seeing``); this package builds on them and on ``hermes.web``."""
