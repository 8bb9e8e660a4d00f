"""The organisation's settings: name, colour and single sign-on, through POST /graphql."""

from __future__ import annotations

from typing import Any

from plumbing.db import unit_of_work
from service.models import Organisation
from tests.support import Org

SSO = (
    "sso { google { ssoOnly domains autoUser } microsoft { ssoOnly } } "
    "customSSO { issuer clientId clientSecret authorizationUrl tokenUrl ssoOnly "
    "initiateURI callbackURI }"
)
CUSTOM = (
    "mutation($c: SvcCustomSSOInput) { editCustomSSO(customSSO: $c) "
    "{ customSSO { issuer clientId clientSecret authorizationUrl tokenUrl ssoOnly "
    "initiateURI callbackURI } } }"
)
GOOGLE = (
    "mutation($g: SvcGoogleSSOInput!) { editGoogleSSO(google: $g) "
    "{ sso { google { ssoOnly domains autoUser } } } }"
)


async def stored_sso(org: Org) -> dict[str, Any]:
    async with unit_of_work(org.live.service.sessions) as session:
        organisation = await session.get(Organisation, org.id)
        assert organisation is not None
        return dict(organisation.sso)


async def test_name_and_color(org: Org) -> None:
    data = await org.admin.gql('mutation { editOrganisationColor(color: "#336699") { id color } }')
    assert data["editOrganisationColor"] == {"id": org.id, "color": "#336699"}
    bob = await org.add_member("Bob")
    data = await bob.gql("{ currentOrganisation { id name color locked } }")
    assert data["currentOrganisation"]["color"] == "#336699"
    assert data["currentOrganisation"]["locked"] is False
    data = await org.admin.gql("mutation { editOrganisationColor(color: null) { color } }")
    assert data["editOrganisationColor"]["color"] is None
    denied = await bob.gql.denied('mutation { editOrganisationColor(color: "#000") { id } }')
    assert denied == ["Mutation.editOrganisationColor"]
    message = await org.admin.gql.error("mutation { editOrganisationColor(color: 12) { id } }")
    assert "color" in message.lower()
    message = await org.admin.gql.error('mutation { editOrganisationName(name: "") { id } }')
    assert "SvcName" in message


async def test_sso_defaults_and_public_providers(org: Org) -> None:
    data = await org.admin.gql(f"{{ currentOrganisation {{ {SSO} }} }}")
    assert data["currentOrganisation"] == {
        "sso": {
            "google": {"ssoOnly": False, "domains": [], "autoUser": False},
            "microsoft": {"ssoOnly": False},
        },
        "customSSO": None,
    }
    data = await org.admin.gql(
        GOOGLE, {"g": {"domains": ["Example.com", "@acme.io", "example.com"], "autoUser": True}}
    )
    assert data["editGoogleSSO"]["sso"]["google"] == {
        "ssoOnly": False,
        "domains": ["example.com", "acme.io"],
        "autoUser": True,
    }
    # Only the fields given change (the screen autosaves one setting at a time).
    data = await org.admin.gql(GOOGLE, {"g": {"ssoOnly": True}})
    assert data["editGoogleSSO"]["sso"]["google"] == {
        "ssoOnly": True,
        "domains": ["example.com", "acme.io"],
        "autoUser": True,
    }
    data = await org.admin.gql(
        "mutation { editMicrosoftSSO(microsoft: {ssoOnly: true}) "
        "{ sso { microsoft { ssoOnly } google { ssoOnly } } } }"
    )
    assert data["editMicrosoftSSO"]["sso"] == {
        "microsoft": {"ssoOnly": True},
        "google": {"ssoOnly": True},
    }
    message = await org.admin.gql.error(GOOGLE, {"g": {"domains": ["ok.com", "not a domain"]}})
    assert '"google.domains[1]"' in message
    assert (await stored_sso(org))["google"]["domains"] == ["example.com", "acme.io"]
    message = await org.admin.gql.error("mutation { editMicrosoftSSO(microsoft: {}) { id } }")
    assert "ssoOnly" in message


async def test_custom_sso_secret_is_never_returned(org: Org) -> None:
    settings: dict[str, Any] = {
        "issuer": "https://login.example.com/realm",
        "clientId": "timebot",
        "clientSecret": "s3cr3t-value",
        "ssoOnly": True,
    }
    data = await org.admin.gql(CUSTOM, {"c": settings})
    custom = data["editCustomSSO"]["customSSO"]
    assert custom["issuer"] == "https://login.example.com/realm"
    assert custom["clientId"] == "timebot"
    assert custom["clientSecret"] == "********"
    assert custom["ssoOnly"] is True
    assert custom["authorizationUrl"] is None and custom["tokenUrl"] is None
    assert custom["initiateURI"].endswith(f"/sso/{org.id}/custom/initiate")
    assert custom["callbackURI"].endswith(f"/sso/{org.id}/custom/callback")
    assert (await stored_sso(org))["custom"]["clientSecret"] == "s3cr3t-value"
    # The audit trail records the mask, not the secret.
    trails = await org.admin.gql(
        '{ getAuditTrails(operations: ["editCustomSSO"]) { arguments { name value } } }'
    )
    assert "s3cr3t-value" not in str(trails)
    assert "********" in str(trails)

    # Sending back the mask keeps the stored secret ("Other provider": both endpoints).
    other = {
        **settings,
        "clientSecret": "********",
        "authorizationUrl": "https://idp.example.com/authorize",
        "tokenUrl": "https://idp.example.com/token",
        "ssoOnly": None,
    }
    data = await org.admin.gql(CUSTOM, {"c": other})
    custom = data["editCustomSSO"]["customSSO"]
    assert custom["tokenUrl"] == "https://idp.example.com/token"
    assert custom["ssoOnly"] is False
    assert (await stored_sso(org))["custom"]["clientSecret"] == "s3cr3t-value"

    # Bad input names the field of the input object; nothing changes.
    bad: dict[str, dict[str, Any]] = {
        "customSSO.issuer": {"issuer": "ftp://example.com"},
        "customSSO.clientId": {"clientId": "  "},
        "customSSO.clientSecret": {"clientSecret": ""},
        "customSSO.tokenUrl": {"authorizationUrl": "https://a.example.com", "tokenUrl": None},
        "customSSO.authorizationUrl": {"tokenUrl": "https://a.example.com"},
    }
    for argument, change in bad.items():
        message = await org.admin.gql.error(CUSTOM, {"c": {**settings, **change}})
        assert f'"{argument}"' in message, (argument, message)
    assert (await stored_sso(org))["custom"]["tokenUrl"] == "https://idp.example.com/token"

    # Null clears; the mask alone cannot set a secret that does not exist.
    data = await org.admin.gql(CUSTOM, {"c": None})
    assert data["editCustomSSO"]["customSSO"] is None
    message = await org.admin.gql.error(CUSTOM, {"c": {**settings, "clientSecret": "********"}})
    assert '"customSSO.clientSecret"' in message


async def test_only_admins_see_and_edit_sso(org: Org) -> None:
    bob = await org.add_member("Bob", role="manager")
    body = await bob.gql.body(f"{{ currentOrganisation {{ id {SSO} }} }}")
    assert body["data"]["currentOrganisation"] == {"id": org.id}
    assert sorted(body["permissionsErrors"]) == [
        "SvcOrganisation.customSSO",
        "SvcOrganisation.sso",
    ]
    for query, variables in (
        (GOOGLE, {"g": {"ssoOnly": True}}),
        ("mutation { editMicrosoftSSO(microsoft: {ssoOnly: true}) { id } }", None),
        (CUSTOM, {"c": None}),
    ):
        denied = await bob.gql.denied(query, variables)
        assert len(denied) == 1 and denied[0].startswith("Mutation.edit"), denied
    assert await stored_sso(org) == {}
