from shop.version import version


def test_version_is_written():
    assert version() == "1.0"
