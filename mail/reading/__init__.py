"""What a message says, read without I/O: the raw message into ReadMessage, HTML to text, the
reply's own words, the signs of machine-written mail, the decisions a reply states."""
