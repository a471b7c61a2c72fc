"""Checks that reject a program before it is canonicalized: Acc windows the hardware writes wrong
(``windows``, rules in ``rules/windows.py``) and relayouts of Acc tiles (``relayout``)."""
