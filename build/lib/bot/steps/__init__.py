"""Each trigger as a step through the one locked turn (``turn``): a start, a click, a timer, the
Home tab, a lost run, a removal; and who may answer (``rules``)."""
