"""The pure core: the rules of SPEC §3-§5 as functions from data to data. No I/O is imported here."""
