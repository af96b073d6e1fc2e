from shop.rates import rate


def test_euro_is_the_base():
    assert rate("EUR") == 100


def test_dollar():
    assert rate("USD") == 108
