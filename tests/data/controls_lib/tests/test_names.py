import pytest
from shop.names import route, slug


@pytest.mark.parametrize("text", ["Tea Cake", " tea cake ", "TEA CAKE"])
def test_slug(text):
    assert slug(text) == "tea-cake"


@pytest.mark.parametrize(
    "path", ["/api/users", "api/users/", "é"], ids=["/api/users", "trailing", "é"]
)
def test_route(path):
    assert route(path) == "/" + path.strip("/")


def test_route_is_rooted():
    assert route("x").startswith("/")
