"""A second, different OpenID provider for the sign-in tests: django-oidc-provider
(PyPI) in a one-file Django project on 127.0.0.1, with Django's own login form,
a confidential client for Countersign, and accounts in Django's groups, which a
test can change while the person is signed in.

    python provider.py REDIRECT_URL      (prints "issuer: URL" when ready)
    POST /test/accounts/NAME {"groups": [...]}

It differs from the oidc-provider of tests/node22 where an operator would see
it: the issuer has a path (/openid), subjects are usernames, the groups come
from Django's auth groups through a scope of its own, and it sends no `iss`
with the authorization response (RFC 9207 is optional).
"""

import io
import json
import sys
import tempfile
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import django
from django.conf import settings

ACCOUNTS = {
    "dana": ("Dana", "Reviewer", "dana@example.com", ["countersign-reviewers"]),
    "erin": ("Erin", "Officer", "erin@example.com", ["countersign-reviewers", "security"]),
    "nobody": ("No", "Role", "nobody@example.com", ["marketing"]),
}


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def subject(user):
    """OIDC_IDTOKEN_SUB_GENERATOR: the username, as a directory would give it."""
    return user.username


def userinfo(claims, user):
    """OIDC_USERINFO: the standard claims from Django's user."""
    claims["name"] = user.get_full_name()
    claims["email"] = user.email
    return claims


def configure(port, data):
    settings.configure(
        DEBUG=False,
        SECRET_KEY="sign-in tests only",
        ALLOWED_HOSTS=["127.0.0.1"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sessions",
            "oidc_provider",
        ],
        MIDDLEWARE=[
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(data / "provider.sqlite3")}},
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "DIRS": [str(Path(__file__).parent / "templates")],
                "APP_DIRS": True,
                "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
            }
        ],
        USE_TZ=True,
        LOGIN_URL="/login/",
        # Test accounts only: a fast hash keeps each sign-in quick.
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        SITE_URL=f"http://127.0.0.1:{port}",
        OIDC_IDTOKEN_INCLUDE_CLAIMS=True,
        OIDC_IDTOKEN_SUB_GENERATOR=f"{__name__}.subject",
        OIDC_USERINFO=f"{__name__}.userinfo",
        OIDC_EXTRA_SCOPE_CLAIMS="claims.GroupClaims",
    )
    django.setup()
    from django.contrib.auth.views import LoginView
    from django.urls import include, path
    from django.views.decorators.csrf import csrf_exempt
    from django.views.decorators.http import require_POST

    # ROOT_URLCONF is this module: its URLs, once Django is set up.
    global urlpatterns
    urlpatterns = [
        path("login/", LoginView.as_view()),
        path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
        path("test/accounts/<str:name>", csrf_exempt(require_POST(set_groups))),
    ]


def seed(redirect):
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from oidc_provider.models import Client, ResponseType

    call_command("migrate", verbosity=0)
    call_command("creatersakey", stdout=io.StringIO())
    for username, (first, last, email, groups) in ACCOUNTS.items():
        user = User.objects.create_user(username, email, "any", first_name=first, last_name=last)
        user.groups.set(Group.objects.get_or_create(name=g)[0] for g in groups)
    client = Client.objects.create(
        name="Countersign",
        client_type="confidential",
        client_id="countersign",
        client_secret="test-secret",
        jwt_alg="RS256",
        require_consent=False,
        _redirect_uris=redirect,
        _scope="openid profile email groups",
    )
    client.response_types.add(ResponseType.objects.get(value="code"))


def set_groups(request, name):
    """POST /test/accounts/NAME {"groups": [...]}: what the directory now says."""
    from django.contrib.auth.models import Group, User
    from django.http import HttpResponse

    groups = json.loads(request.body)["groups"]
    user = User.objects.get(username=name)
    user.groups.set(Group.objects.get_or_create(name=g)[0] for g in groups)
    return HttpResponse(status=204)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python provider.py REDIRECT_URL")
    server = make_server("127.0.0.1", 0, None, server_class=ThreadingServer, handler_class=QuietHandler)
    port = server.server_port
    with tempfile.TemporaryDirectory(prefix="countersign-django-oidc-") as data:
        configure(port, Path(data))
        seed(sys.argv[1])
        from django.core.wsgi import get_wsgi_application

        server.set_app(get_wsgi_application())
        print(f"issuer: http://127.0.0.1:{port}/openid", flush=True)
        # Ends when the test kills it (or its stdin closes with the test).
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        server.shutdown()


if __name__ == "__main__":
    main()
