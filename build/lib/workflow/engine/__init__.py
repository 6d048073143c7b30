"""The engine's core: a graph of executors built and checked (``builder``), run in supersteps
(``runner``), paused at request ports and answered from a fresh process (``respond``)."""
