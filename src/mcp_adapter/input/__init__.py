"""Input requests: asking the client for input mid-call in each protocol era, and the state
a question carries to the answer."""
