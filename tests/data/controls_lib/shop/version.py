def version():
    from shop import _version  # written by the table's setup, never committed

    return _version.VERSION
