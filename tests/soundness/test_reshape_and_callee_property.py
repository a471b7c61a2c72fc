"""End-to-end soundness of two rejections: a shape-changing reshape of an Acc tile that
is read or written (``acc-reshape-use-violation``) and a Mat window passed to a program function
that uses it as a matmul operand (``mat-window-to-matmul-callee-violation``); and of reshapes of
Vec windows (copied unless dense and aligned; rejected when written through the reshape).  Over random
programs, ``hardware(optimize(p)) == ideal(p)``, or the pass rejects ``p`` and the hardware model
confirms that ``p`` miscomputes (or faults) on the path the message names.  The coverage test in
``test_soundness_property`` asserts both strategies draw every route, accepted and rejected."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from strategies import acc_reshape_cases, mat_call_cases, window_reshape_cases
from test_soundness_property import _judge


@pytest.mark.slow
@given(acc_reshape_cases())
def test_acc_reshapes_match_ideal_or_are_rejected_for_a_confirmed_reason(case) -> None:
    _judge(*case)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acc_reshape_cases())
def test_acc_reshapes_smoke(case) -> None:
    _judge(*case)


@pytest.mark.slow
@given(mat_call_cases())
def test_mat_windows_passed_to_matmul_callees_match_ideal_or_are_rejected_for_a_confirmed_reason(
        case) -> None:
    _judge(*case)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mat_call_cases())
def test_mat_windows_passed_to_matmul_callees_smoke(case) -> None:
    _judge(*case)


@pytest.mark.slow
@given(window_reshape_cases())
def test_reshaped_vec_windows_match_ideal_or_are_rejected_for_a_confirmed_reason(case) -> None:
    _judge(*case)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(window_reshape_cases())
def test_reshaped_vec_windows_smoke(case) -> None:
    _judge(*case)
