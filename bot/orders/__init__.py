"""Where an approved basket goes: the order, its destinations, and placing it exactly once."""
