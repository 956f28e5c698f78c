"""The ``email`` platform: IMAP in (aioimaplib), SMTP out (aiosmtplib); imported only
when it starts."""
