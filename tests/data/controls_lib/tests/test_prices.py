import pytest
from shop.prices import discount, gross, net


@pytest.mark.parametrize(("cents", "expected"), [(100, 120), (0, 0), (250, 300)])
def test_gross(cents, expected):
    assert gross(cents) == expected


def test_net():
    assert net(5) == 5


@pytest.mark.parametrize("pct", [0, 10, 50], ids=["none", "tenth", "half"])
def test_discount(pct):
    assert discount(200, pct) == 200 - 2 * pct
