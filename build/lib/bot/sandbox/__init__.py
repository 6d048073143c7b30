"""The local sandbox: the real bot, with Slack, Lambda and S3 played on 127.0.0.1."""
