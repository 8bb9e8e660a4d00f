"""The web front: pages a person opens in a browser (the one-click approval links, sign-in and
the account page). It reaches the service like the other fronts, through timebot's GraphQL
client, and imports nothing from `service/`."""
