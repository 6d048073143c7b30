"""What the bot keeps besides checkpoints, in the same bucket: receipts (which checkpoint the
channel shows), outcome records (``history``), and the basket timers on EventBridge Scheduler.
Nothing here knows Slack."""
