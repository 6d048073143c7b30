"""The Bolt app and its listeners, one module per Slack surface: what each request acks within
Slack's 3 seconds, and which step its lazy run takes (``bot.steps``)."""
