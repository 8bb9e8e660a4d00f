"""Who timebot acts for: the people directory (which person, with which key), the
organisations of a hosted service it serves, and the listing of both."""
