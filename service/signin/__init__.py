"""Interactive sign-in: e-mail codes (`codes`), browser sessions and takeovers (`sessions`),
and what the HTTP layer tells them about the browser (`web`)."""
