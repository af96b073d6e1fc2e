def slug(text):
    return text.strip().lower().replace(" ", "-")


def route(path):
    return "/" + path.strip("/")
