"""What Slack sees and sends: reading its payloads, the Block Kit the bot posts (basket, modal,
Home tab), posting it (``outbox``), the WebClient, and installing the app (OAuth)."""
