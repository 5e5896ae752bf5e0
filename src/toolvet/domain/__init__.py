"""The pure core: the rules of tools, discovery and approval as functions from data to data. No I/O is imported here."""
