class TestCart:
    def test_names(self, cart):
        assert cart.names() == ["tea", "cake"]

    def test_total(self, cart):
        assert cart.total() == 750
