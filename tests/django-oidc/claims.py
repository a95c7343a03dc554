"""The `groups` scope of the django-oidc-provider test provider (provider.py):
the person's Django groups, in the ID token and from user info."""

from oidc_provider.lib.claims import ScopeClaims


class GroupClaims(ScopeClaims):
    info_groups = ("Groups", "The groups you belong to.")

    def scope_groups(self):
        return {"groups": sorted(g.name for g in self.user.groups.all())}
