"""Secrets out of stored text: a table of secret shapes (:mod:`.rules`) and the pass that
replaces them by typed placeholders such as ``[secret:aws-access-key]`` (:mod:`.scrub`).

>>> from harkback.stages.redact.scrub import redact
>>> redact("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")[0]
'export AWS_ACCESS_KEY_ID=[secret:aws-access-key]'
"""
