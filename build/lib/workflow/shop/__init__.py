"""The weekly shop: the workflow, its types, its shopper and its console app."""

# Where the weekly shop keeps its objects in a bucket, unless told otherwise (CHECKPOINT_PREFIX).
# Here, not in records.py, so that reading it imports nothing (the bot's settings need it at
# every cold start, on the ack path).
SHOP_PREFIX = "weekly-shop/"
