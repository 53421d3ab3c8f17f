import pytest

from mmvitdyn.utils import check_int, check_number


@pytest.mark.parametrize('value', [0, 3, 10])
def test_ints_in_range_pass_through(value):
    assert check_int(value, 'n', minimum=0, maximum=10) == value


@pytest.mark.parametrize('value,message', [
    (True, 'n=True must be an int in [0, 10]'),
    (2.0, 'n=2.0 must be an int in [0, 10]'),
    ('4', "n='4' must be an int in [0, 10]"),
    (11, 'n=11 must be an int in [0, 10]'),
    (-1, 'n=-1 must be an int in [0, 10]'),
])
def test_other_ints_are_named(value, message):
    with pytest.raises(ValueError, match=f'^{message.replace("[", ".").replace("]", ".")}$'):
        check_int(value, 'n', minimum=0, maximum=10)


@pytest.mark.parametrize('value,kwargs,message', [
    (0, dict(low=0, low_open=True), 'x=0 must be a finite number > 0'),
    (1, dict(high=1, high_open=True), 'x=1 must be a finite number < 1'),
    (float('nan'), dict(), 'x=nan must be a finite number'),
    (float('-inf'), dict(low=0), 'x=-inf must be a finite number >= 0'),
    (False, dict(low=0, high=1), r'x=False must be a finite number in \[0, 1\]'),
    ('0.5', dict(low=0, high=1, low_open=True), r"x='0.5' must be a finite number in \(0, 1\]"),
])
def test_other_numbers_are_named(value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_number(value, 'x', **kwargs)


def test_numbers_on_closed_bounds_pass():
    assert check_number(0, 'x', 0, 1) == 0 and check_number(1.0, 'x', 0, 1) == 1.0
