TAX = 20


def net(cents):
    return cents


def gross(cents):
    return cents + cents * TAX // 100


def discount(cents, pct):
    if pct < 0:
        raise ValueError("a discount cannot be negative")
    return cents - cents * pct // 100


class Cart:
    def __init__(self):
        self.items = []

    def add(self, name, cents):
        self.items.append((name, cents))
        return self

    def total(self):
        return sum(cents for _, cents in self.items)

    def names(self):
        return [name for name, _ in self.items]
