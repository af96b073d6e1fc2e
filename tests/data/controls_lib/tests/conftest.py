import pytest
from shop.prices import Cart


@pytest.fixture(scope="module")
def cart():
    return Cart().add("tea", 300).add("cake", 450)
