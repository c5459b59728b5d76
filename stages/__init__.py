"""The domain of harkback: records, errors, ports and the five recall stages.

Pure: imports nothing that does I/O (no database driver, no HTTP client).
"""
