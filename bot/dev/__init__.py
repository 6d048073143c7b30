"""``weekly-shop dev``: the real bot on a developer's own Slack workspace, over Socket Mode.

No public URL and no AWS account: the app opens a WebSocket to Slack (Socket Mode, with its
app-level token) and the same Bolt listeners answer there (``bot.listeners.app``); what runs on
Lambda as a lazy self-invocation runs in a thread instead (Bolt's default lazy runner, used when
no Lambda adapter replaces it). S3 and EventBridge Scheduler are the sandbox's local stand-ins
(``bot.sandbox.moto_server``, ``bot.sandbox.scheduler_player``) unless ``--store`` names a real
bucket. ``tokens`` finds the two Slack tokens; ``run`` starts and stops it all.
"""
