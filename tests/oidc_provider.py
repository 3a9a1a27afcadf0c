"""A small, real OpenID Connect provider for tests: authorization code flow, RS256 ID tokens,
userinfo and JWKS over HTTP on loopback. Standard library plus PyJWT and cryptography.

The authorization endpoint signs in whoever ``sign_in_as`` named (no form: the provider's own
login page is not what the portal's tests are about) and redirects back with a code; the token
endpoint checks the client's id, secret and redirect URI, and answers with an ID token signed by
the key the JWKS endpoint publishes.

    with OidcTestProvider(client_id="kb", client_secret="s3cret") as provider:
        provider.sign_in_as({"sub": "u-1", "preferred_username": "ivan", "groups": ["qa"]})
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def _b64(number: int) -> str:
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        provider = self.server.provider
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/authorize":
            return self._redirect(provider.authorize(query))
        if url.path == "/jwks":
            return self._json(200, provider.jwks())
        if url.path == "/userinfo":
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            claims = provider.userinfo(token)
            return self._json(200 if claims else 401, claims or {"error": "invalid_token"})
        self._json(404, {"error": "not_found"})

    def do_POST(self) -> None:  # noqa: N802
        provider = self.server.provider
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        if urlsplit(self.path).path == "/token":
            status, body = provider.token(form)
            return self._json(status, body)
        self._json(404, {"error": "not_found"})

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _json(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    provider: OidcTestProvider


class OidcTestProvider:
    def __init__(self, client_id: str = "knowledge-belt", client_secret: str = "s3cret") -> None:
        self.client_id, self.client_secret = client_id, client_secret
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(4)
        self._lock = threading.Lock()
        self._codes: dict[str, dict] = {}
        self._tokens: dict[str, dict] = {}
        self.claims: dict = {}
        self.requests: list[str] = []
        self._http: _Server | None = None

    def sign_in_as(self, claims: dict) -> None:
        """The account the next authorization signs in (``sub`` required)."""
        self.claims = dict(claims)

    # --- endpoints --------------------------------------------------------------------------

    def authorize(self, query: dict) -> str:
        self.requests.append("authorize")
        redirect = query.get("redirect_uri", "")
        if query.get("client_id") != self.client_id or query.get("response_type") != "code":
            return f"{redirect}?{urlencode({'error': 'unauthorized_client'})}"
        code = secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = {
                "claims": dict(self.claims),
                "nonce": query.get("nonce"),
                "redirect_uri": redirect,
            }
        return f"{redirect}?{urlencode({'code': code, 'state': query.get('state', '')})}"

    def token(self, form: dict) -> tuple[int, dict]:
        self.requests.append("token")
        if (form.get("client_id"), form.get("client_secret")) != (
            self.client_id,
            self.client_secret,
        ):
            return 401, {"error": "invalid_client"}
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)  # a code works once
        if grant is None or grant["redirect_uri"] != form.get("redirect_uri"):
            return 400, {"error": "invalid_grant"}
        now = int(time.time())
        payload = {
            **grant["claims"],
            "iss": self.issuer,
            "aud": self.client_id,
            "iat": now,
            "exp": now + 300,
        }
        if grant["nonce"]:
            payload["nonce"] = grant["nonce"]
        id_token = jwt.encode(payload, self._key, algorithm="RS256", headers={"kid": self.kid})
        access = secrets.token_urlsafe(16)
        with self._lock:
            self._tokens[access] = grant["claims"]
        return 200, {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 300,
            "id_token": id_token,
        }

    def userinfo(self, access_token: str) -> dict | None:
        self.requests.append("userinfo")
        with self._lock:
            return self._tokens.get(access_token)

    def jwks(self) -> dict:
        numbers = self._key.public_key().public_numbers()
        return {
            "keys": [
                {"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
                 "n": _b64(numbers.n), "e": _b64(numbers.e)}
            ]
        }  # fmt: skip

    # --- serving ----------------------------------------------------------------------------

    @property
    def issuer(self) -> str:
        assert self._http is not None
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def settings(self) -> dict[str, str]:
        """The portal's environment for this provider."""
        return {
            "KB_OIDC_CLIENT_ID": self.client_id,
            "KB_OIDC_CLIENT_SECRET": self.client_secret,
            "KB_OIDC_AUTHORIZATION_URL": f"{self.issuer}/authorize",
            "KB_OIDC_TOKEN_URL": f"{self.issuer}/token",
            "KB_OIDC_USERINFO_URL": f"{self.issuer}/userinfo",
            "KB_OIDC_JWKS_URL": f"{self.issuer}/jwks",
            "KB_OIDC_ISSUER": self.issuer,
        }

    def __enter__(self) -> OidcTestProvider:
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.provider = self
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
