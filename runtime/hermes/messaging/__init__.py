"""The agent's own messages: where this profile may send (``outbound``) and the
``send_message`` tool (toolset ``messaging``) that sends there."""
