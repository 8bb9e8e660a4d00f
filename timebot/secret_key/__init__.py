"""What TIMEBOT_SECRET_KEY derives and guards: the sealed API keys (`crypto`), the signed
reply tokens and links (`tokens`), the signed state of a redirect's round trip
(`signed_state`), and the check that the key is strong enough (`strength`)."""
