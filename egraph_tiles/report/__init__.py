"""What the pass decided and why: per-use explanations (``explain``) and the report behind
``--explain`` / ``--json`` (``report``)."""
