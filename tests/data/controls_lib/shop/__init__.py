"""A tiny shop: prices, carts, rates and names."""
