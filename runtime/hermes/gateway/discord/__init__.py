"""The Discord platform (discord.py), imported only by a gateway that runs it."""
